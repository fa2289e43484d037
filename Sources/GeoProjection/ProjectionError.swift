/// Every failure of the GeoProjection module.
///
/// Transports translate these in one place; `code` is the stable, machine-readable part and
/// `description` the human-readable one. Where PROJ explained a failure, its own text is kept
/// verbatim in the associated `message` so that nothing is lost in translation.
public enum ProjectionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The CRS text has none of the accepted forms ("EPSG:5186", "epsg:5186", "5186",
    /// "+proj=..."), so PROJ was never asked about it. `reason` says what is wrong.
    case malformedCRS(text: String, reason: String)

    /// The CRS is well formed but PROJ could not build a coordinate reference system from it:
    /// an EPSG code missing from PROJ's database, an unknown `+proj=` name, or a definition that
    /// describes an operation rather than a CRS. `identifier` is the normalised definition;
    /// `message` is PROJ's own explanation.
    case unknownCRS(identifier: String, message: String)

    /// An input coordinate was rejected before reaching PROJ. `index` is the position of the
    /// first offending point in a batch, `nil` for a single-point transform.
    case invalidCoordinate(index: Int?, problem: CoordinateProblem)

    /// PROJ found no coordinate operation between the two CRSs (`index` is `nil`), or failed
    /// on a point (`index` is its position in a batch, `nil` for a single point). `message`
    /// is PROJ's error text, followed by its log detail when it gave one.
    case transformFailed(index: Int?, message: String)

    /// PROJ asked for a file it may not read: outside its data directories, or not a
    /// regular file (a device, a FIFO). CRS texts come from clients, and a PROJ string
    /// names files of its own choosing (`+grids=`, `+nadgrids=`, `+init=`); see
    /// `PROJFileAccess`. `identifier` is the CRS (or the pair) being built; `path` the
    /// file as PROJ named it.
    case fileAccessRefused(identifier: String, path: String)

    /// The CRS has other than two axes (geocentric, 3D, vertical or compound): an answer
    /// carries x and y only, so converting to or from it would drop or invent an ordinate.
    case unsupportedCRS(identifier: String, reason: String)

    /// The operation between the two CRSs needs grid files PROJ does not have (in its
    /// data directories); `grids` names them when PROJ could say.
    case gridUnavailable(identifier: String, grids: [String])

    /// `proj_context_create` returned no context: out of memory, or PROJ could not start.
    case contextCreationFailed

    /// Why an input coordinate was rejected.
    public enum CoordinateProblem: Equatable, Sendable, CustomStringConvertible {
        /// One ordinate of the input point.
        public enum Axis: String, Sendable {
            /// Longitude or easting.
            case x
            /// Latitude or northing.
            case y
        }

        /// The ordinate is NaN.
        case notANumber(Axis)
        /// The ordinate is +infinity or -infinity.
        case infinite(Axis)
        /// The source CRS is geographic and the longitude lies outside [-180, 180] degrees.
        /// PROJ would silently wrap such a value; a longitude of 500 is a data error here.
        case longitudeOutOfRange(degrees: Double)
        /// The source CRS is geographic and the latitude lies outside [-90, 90] degrees.
        case latitudeOutOfRange(degrees: Double)

        public var description: String {
            switch self {
            case .notANumber(let axis):
                "\(axis.rawValue) is NaN"
            case .infinite(let axis):
                "\(axis.rawValue) is infinite"
            case .longitudeOutOfRange(let degrees):
                "longitude \(degrees) is outside [-180, 180] degrees"
            case .latitudeOutOfRange(let degrees):
                "latitude \(degrees) is outside [-90, 90] degrees"
            }
        }
    }

    /// A stable snake_case identifier for logs and API responses.
    public var code: String {
        switch self {
        case .malformedCRS: "malformed_crs"
        case .unknownCRS: "unknown_crs"
        case .invalidCoordinate: "invalid_coordinate"
        case .transformFailed: "transform_failed"
        case .fileAccessRefused: "proj_file_refused"
        case .unsupportedCRS: "unsupported_crs"
        case .gridUnavailable: "grid_unavailable"
        case .contextCreationFailed: "context_creation_failed"
        }
    }

    public var description: String {
        switch self {
        case .malformedCRS(let text, let reason):
            "malformed CRS \"\(text)\": \(reason)"
        case .unknownCRS(let identifier, let message):
            "unknown CRS \"\(identifier)\": \(message)"
        case .invalidCoordinate(let index, let problem):
            "invalid coordinate\(Self.position(index)): \(problem)"
        case .transformFailed(let index, let message):
            "transform failed\(Self.position(index)): \(message)"
        case .fileAccessRefused(let identifier, let path):
            "\(identifier): PROJ may read grid and init files only from its data directories, as regular files; \"\(path)\" is refused"
        case .unsupportedCRS(let identifier, let reason):
            "unsupported CRS \"\(identifier)\": \(reason)"
        case .gridUnavailable(let identifier, let grids):
            "\(identifier) needs grid files that are not installed\(grids.isEmpty ? "" : ": " + grids.joined(separator: ", "))"
        case .contextCreationFailed:
            "could not create a PROJ context"
        }
    }

    private static func position(_ index: Int?) -> String {
        index.map { " at index \($0)" } ?? ""
    }
}
