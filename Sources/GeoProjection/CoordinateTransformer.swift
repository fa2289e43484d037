import CProj

/// Converts coordinates between CRSs with PROJ.
///
/// A transformer owns one PROJ context (`PJ_CONTEXT`) and every PROJ object made from it.
/// PROJ contexts are not thread-safe, so the class is deliberately not `Sendable`: each task or
/// thread creates its own transformer (creation is cheap; the first transform of each CRS pair
/// is not). The compiler enforces this; a transformer may be handed over to another task, but
/// never used by two at once.
///
/// Building a transformation costs PROJ about 15 ms (database lookups, operation selection),
/// so the first transform between a pair of CRSs builds it once and caches it; every later
/// point between that pair costs microseconds. The cache holds at most
/// `maxCachedTransformations` pairs.
///
/// Coordinates are always in visualisation order: longitude/latitude in degrees for a
/// geographic CRS, easting/northing for a projected one (see `CRSPoint`).
public final class CoordinateTransformer {
    /// The most CRS pairs kept ready. Real workloads use a handful; the bound only stops a
    /// client that cycles through many CRSs from growing the cache without limit. When it is
    /// reached the whole cache is dropped, which costs at most one rebuild per pair.
    public static let maxCachedTransformations = 32

    /// The run-time PROJ release, e.g. "9.1.1", for logs and a version endpoint.
    public static let projVersion: String = proj_info().version.map { String(cString: $0) } ?? "unknown"

    private struct Pair: Hashable {
        var source: CRS
        var target: CRS
    }

    /// A normalised PROJ transformation and what input it accepts.
    private struct Transformation {
        /// Owned `PJ*`; destroyed when evicted or in `deinit`.
        let operation: OpaquePointer
        /// Whether inputs are longitude/latitude and so get range-checked.
        let sourceIsGeographic: Bool
        let source: CRS
        let target: CRS
    }

    /// Owned `PJ_CONTEXT*`.
    private let context: OpaquePointer
    private var transformations: [Pair: Transformation] = [:]
    /// Error messages PROJ logged since the last `clearLog()`; PROJ reports the reason for a
    /// failed `proj_create` only through its logger, not through an error code.
    private var loggedErrors: [String] = []
    /// Files PROJ asked for since the last `clearLog()` and was refused (``PROJFileAccess``).
    private var refusedFiles: [String] = []

    /// Creates a transformer with its own PROJ context. PROJ's error log is captured into the
    /// thrown errors instead of being printed to standard error.
    public init() throws(ProjectionError) {
        guard let context = proj_context_create() else {
            throw .contextCreationFailed
        }
        self.context = context
        _ = proj_log_level(context, PJ_LOG_ERROR)
        // The logger receives this transformer back as its user data. PROJ only calls it
        // synchronously from calls made on this context, while `self` is alive.
        proj_log_func(context, Unmanaged.passUnretained(self).toOpaque()) { userData, _, message in
            guard let userData, let message else { return }
            let transformer = Unmanaged<CoordinateTransformer>.fromOpaque(userData).takeUnretainedValue()
            transformer.loggedErrors.append(String(cString: message))
        }
        PROJFileAccess.install(on: context, userData: Unmanaged.passUnretained(self).toOpaque())
    }

    /// Called by ``PROJFileAccess`` when it refuses PROJ a file.
    func recordRefusedFile(_ path: String) {
        if !refusedFiles.contains(path) { refusedFiles.append(path) }
    }

    deinit {
        for transformation in transformations.values {
            proj_destroy(transformation.operation)
        }
        proj_context_destroy(context)
    }

    /// Builds and caches the transformation between `source` and `target` without converting
    /// anything, so that a configuration naming an unknown CRS fails at start-up.
    public func prepare(from source: CRS, to target: CRS) throws(ProjectionError) {
        _ = try transformation(from: source, to: target)
    }

    /// Converts one point from `source` to `target`.
    ///
    /// Throws `.invalidCoordinate` (index `nil`) for a NaN or infinite ordinate, or for a
    /// longitude outside [-180, 180] or latitude outside [-90, 90] degrees when `source` is
    /// geographic; `.unknownCRS` when PROJ does not know a CRS; `.transformFailed` when PROJ
    /// cannot convert the point.
    public func transform(_ point: CRSPoint, from source: CRS, to target: CRS) throws(ProjectionError) -> CRSPoint {
        let transformation = try transformation(from: source, to: target)
        if let problem = Self.problem(with: point, geographic: transformation.sourceIsGeographic) {
            throw .invalidCoordinate(index: nil, problem: problem)
        }
        return try convert(point, with: transformation, index: nil)
    }

    /// Converts every point of `points` from `source` to `target`, all or nothing.
    ///
    /// Every input is validated before any conversion, and results are written back only when
    /// all points converted, so on any error `points` is unchanged. The error carries the
    /// index of the first offending point.
    public func transform(_ points: inout [CRSPoint], from source: CRS, to target: CRS) throws(ProjectionError) {
        let transformation = try transformation(from: source, to: target)
        for (index, point) in points.enumerated() {
            if let problem = Self.problem(with: point, geographic: transformation.sourceIsGeographic) {
                throw .invalidCoordinate(index: index, problem: problem)
            }
        }
        var converted: [CRSPoint] = []
        converted.reserveCapacity(points.count)
        for (index, point) in points.enumerated() {
            converted.append(try convert(point, with: transformation, index: index))
        }
        points = converted
    }

    /// The number of CRS pairs currently cached; exposed to tests.
    var cachedTransformationCount: Int { transformations.count }

    // MARK: - Validation

    private static func problem(with point: CRSPoint, geographic: Bool) -> ProjectionError.CoordinateProblem? {
        if point.x.isNaN { return .notANumber(.x) }
        if point.y.isNaN { return .notANumber(.y) }
        if point.x.isInfinite { return .infinite(.x) }
        if point.y.isInfinite { return .infinite(.y) }
        guard geographic else { return nil }
        if !(-180.0...180.0).contains(point.x) { return .longitudeOutOfRange(degrees: point.x) }
        if !(-90.0...90.0).contains(point.y) { return .latitudeOutOfRange(degrees: point.y) }
        return nil
    }

    // MARK: - PROJ calls

    private func convert(_ point: CRSPoint, with transformation: Transformation, index: Int?) throws(ProjectionError) -> CRSPoint {
        let operation = transformation.operation
        proj_errno_reset(operation)
        clearLog()
        // t = +infinity tells PROJ the epoch is unknown, as its command-line tools do.
        let output = proj_trans(operation, PJ_FWD, proj_coord(point.x, point.y, 0, .infinity))
        let errorCode = proj_errno(operation)
        let x = output.xy.x
        let y = output.xy.y
        guard errorCode != 0 || !x.isFinite || !y.isFinite else {
            return CRSPoint(x: x, y: y)
        }
        if let path = refusedFiles.first {
            throw .fileAccessRefused(identifier: "\(transformation.source) -> \(transformation.target)", path: path)
        }
        var message = errorCode != 0 ? errorString(errorCode) : "PROJ returned a non-finite coordinate"
        if !loggedErrors.isEmpty {
            message += " (\(loggedErrors.joined(separator: "; ")))"
        }
        throw .transformFailed(index: index, message: message)
    }

    private func transformation(from source: CRS, to target: CRS) throws(ProjectionError) -> Transformation {
        let pair = Pair(source: source, target: target)
        if let cached = transformations[pair] {
            return cached
        }
        let sourceCRS = try createCRS(source)
        defer { proj_destroy(sourceCRS) }
        let targetCRS = try createCRS(target)
        defer { proj_destroy(targetCRS) }

        try checkDimension(sourceCRS, source)
        try checkDimension(targetCRS, target)

        clearLog()
        let created = proj_create_crs_to_crs_from_pj(context, sourceCRS, targetCRS, nil, nil)
        if let path = refusedFiles.first {
            if let created { proj_destroy(created) }
            throw .fileAccessRefused(identifier: "\(source) -> \(target)", path: path)
        }
        guard let operation = created else {
            throw .transformFailed(
                index: nil,
                message: loggedMessage(orElse: "no coordinate operation from \(source) to \(target)"))
        }
        defer { proj_destroy(operation) }
        try checkGrids(operation, source, target)
        // Undo the official axis order (EPSG:4326 is latitude first, EPSG:5186 northing first)
        // so that x is always longitude or easting.
        guard let normalized = proj_normalize_for_visualization(context, operation) else {
            throw .transformFailed(
                index: nil,
                message: loggedMessage(orElse: "could not normalise the axis order from \(source) to \(target)"))
        }

        if transformations.count >= Self.maxCachedTransformations {
            for evicted in transformations.values {
                proj_destroy(evicted.operation)
            }
            transformations.removeAll()
        }
        let transformation = Transformation(operation: normalized, sourceIsGeographic: isGeographic(sourceCRS),
                                            source: source, target: target)
        transformations[pair] = transformation
        return transformation
    }

    /// Creates a PROJ CRS object that the caller must destroy.
    private func createCRS(_ crs: CRS) throws(ProjectionError) -> OpaquePointer {
        clearLog()
        let created = proj_create(context, crs.definition)
        if let path = refusedFiles.first {
            if let created { proj_destroy(created) }
            throw .fileAccessRefused(identifier: crs.definition, path: path)
        }
        guard let object = created else {
            // The context's error code can be left over from an earlier call, so the logged
            // reason comes first.
            let code = proj_context_errno(context)
            throw .unknownCRS(
                identifier: crs.definition,
                message: loggedMessage(orElse: code != 0 ? errorString(code) : "PROJ could not create the CRS"))
        }
        guard proj_is_crs(object) != 0 else {
            proj_destroy(object)
            throw .unknownCRS(identifier: crs.definition, message: "the definition is not a coordinate reference system")
        }
        return object
    }

    /// Geographic 2D/3D CRSs take longitude/latitude input. A bound CRS (a CRS with `+towgs84`
    /// attached) takes the input of the CRS it wraps.
    private func isGeographic(_ crs: OpaquePointer) -> Bool {
        switch proj_get_type(crs) {
        case PJ_TYPE_GEOGRAPHIC_2D_CRS, PJ_TYPE_GEOGRAPHIC_3D_CRS:
            return true
        case PJ_TYPE_BOUND_CRS:
            guard let base = proj_get_source_crs(context, crs) else { return false }
            defer { proj_destroy(base) }
            return isGeographic(base)
        default:
            return false
        }
    }

    /// Answers carry two ordinates, so both CRSs must have exactly two axes: a
    /// geocentric or 3D CRS would lose its third ordinate, and a vertical one has one.
    private func checkDimension(_ crs: OpaquePointer, _ definition: CRS) throws(ProjectionError) {
        var base = crs
        var owned: OpaquePointer?
        defer { if let owned { proj_destroy(owned) } }
        if proj_get_type(crs) == PJ_TYPE_BOUND_CRS, let source = proj_get_source_crs(context, crs) {
            owned = source
            base = source
        }
        let axes: Int
        if let system = proj_crs_get_coordinate_system(context, base) {
            axes = Int(proj_cs_get_axis_count(context, system))
            proj_destroy(system)
        } else {
            axes = 0
        }
        guard axes == 2 else {
            throw .unsupportedCRS(identifier: definition.definition, reason: axes == 0
                ? "it is not a single 2D CRS (a compound CRS has a vertical part); only 2D CRSs (x, y) are supported"
                : "it has \(axes) \(axes == 1 ? "axis" : "axes"); only 2D CRSs (x, y) are supported")
        }
    }

    /// A single operation that needs grid files PROJ does not have is an error, rather
    /// than PROJ's silent fallback (an optional `@grid` is skipped without a word).
    /// Operations with several candidates (`proj_create_crs_to_crs` picks one per point
    /// by area of use) are left to PROJ, which fails the points no candidate covers.
    private func checkGrids(_ operation: OpaquePointer, _ source: CRS, _ target: CRS) throws(ProjectionError) {
        guard proj_get_type(operation) != PJ_TYPE_UNKNOWN,
              proj_coordoperation_is_instantiable(context, operation) == 0 else { return }
        var missing: [String] = []
        for index in 0..<max(0, proj_coordoperation_get_grid_used_count(context, operation)) {
            var shortName: UnsafePointer<CChar>?
            var available: Int32 = 0
            if proj_coordoperation_get_grid_used(context, operation, index, &shortName, nil, nil, nil, nil, nil,
                                                 &available) != 0, available == 0, let shortName {
                missing.append(String(cString: shortName))
            }
        }
        throw .gridUnavailable(identifier: "\(source) -> \(target)", grids: missing)
    }

    private func errorString(_ code: Int32) -> String {
        proj_context_errno_string(context, code).map { String(cString: $0) } ?? "PROJ error \(code)"
    }

    private func clearLog() {
        if !loggedErrors.isEmpty {
            loggedErrors.removeAll(keepingCapacity: true)
        }
        if !refusedFiles.isEmpty {
            refusedFiles.removeAll()
        }
    }

    private func loggedMessage(orElse fallback: String) -> String {
        loggedErrors.isEmpty ? fallback : loggedErrors.joined(separator: "; ")
    }
}

/// One PROJ context must never be used from two threads at once.
@available(*, unavailable)
extension CoordinateTransformer: Sendable {}
