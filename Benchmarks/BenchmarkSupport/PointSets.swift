import GeoCluster

/// Deterministic point sets and viewports shared by the benchmarks and by the script
/// that runs the same work on other implementations.
public enum PointSets {
    public enum Distribution: String, CaseIterable, Sendable {
        /// Uniform over lon -180..180, lat -85..85.
        case uniform
        /// About 50 Gaussian hotspots over South Korea (lon 126..129.5, lat 34..38.5) with
        /// 10% uniform background in the same box: the shape of the bird-sightings layer.
        case korea
    }

    public static let seed: UInt64 = 20_261_122

    public static func points(_ distribution: Distribution, count: Int, seed: UInt64 = seed) -> [Coordinate] {
        var random = SplitMix64(seed: seed)
        switch distribution {
        case .uniform:
            return (0..<count).map { _ in
                Coordinate(longitude: random.uniform(-180, 180), latitude: random.uniform(-85, 85))
            }
        case .korea:
            let hotspots = (0..<50).map { _ in
                (lon: random.uniform(126.3, 129.2), lat: random.uniform(34.3, 38.2),
                 sigma: random.uniform(0.01, 0.15))
            }
            return (0..<count).map { _ in
                if random.unit() < 0.1 {
                    return Coordinate(longitude: random.uniform(126, 129.5), latitude: random.uniform(34, 38.5))
                }
                let h = hotspots[Int(random.next() % UInt64(hotspots.count))]
                let (gx, gy) = random.gaussianPair()
                return Coordinate(longitude: min(180, max(-180, h.lon + gx * h.sigma)),
                                  latitude: min(85, max(-85, h.lat + gy * h.sigma)))
            }
        }
    }

    /// A map view: a `widthPixels` x `heightPixels` window of 256-pixel tiles centred on
    /// `centre` at `zoom`, as a bounding box.
    public struct Viewport: Sendable {
        public var bbox: BoundingBox
        public var zoom: Double
    }

    /// `count` viewports of 1280 x 800 pixels at random zooms 3...16, centred on random
    /// input points.
    public static func viewports(over points: [Coordinate], count: Int = 200, seed: UInt64 = seed + 1,
                                 widthPixels: Double = 1280, heightPixels: Double = 800) -> [Viewport] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let centre = points[Int(random.next() % UInt64(points.count))]
            let zoom = Double(3 + Int(random.next() % 14))
            let worldPixels = 256 * Double(1 << Int(zoom))
            let cx = WebMercator.x(longitude: centre.longitude)
            let cy = WebMercator.y(latitude: centre.latitude)
            let halfW = widthPixels / 2 / worldPixels
            let halfH = heightPixels / 2 / worldPixels
            let north = WebMercator.latitude(y: max(0, cy - halfH))
            let south = WebMercator.latitude(y: min(1, cy + halfH))
            // south <= north always holds here, so the box is valid.
            let bbox = (try? BoundingBox(west: WebMercator.longitude(x: cx - halfW), south: south,
                                         east: WebMercator.longitude(x: cx + halfW), north: north)) ?? .world
            return Viewport(bbox: bbox, zoom: zoom)
        }
    }
}

/// SplitMix64 with the few distributions the generators need.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    public mutating func uniform(_ low: Double, _ high: Double) -> Double { low + (high - low) * unit() }

    /// Two independent standard normal values (Box-Muller).
    public mutating func gaussianPair() -> (Double, Double) {
        let u1 = max(unit(), 0x1p-53)
        let u2 = unit()
        let r = (-2 * Self.log(u1)).squareRoot()
        let angle = 2 * Double.pi * u2
        return (r * Self.cos(angle), r * Self.sin(angle))
    }

    // Series are plenty for generating test data and keep this target free of libm.
    private static func log(_ x: Double) -> Double {
        // ln(x) = 2 artanh((x - 1) / (x + 1)), after scaling x into [0.5, 1).
        var m = x
        var e = 0.0
        while m < 0.5 { m *= 2; e -= 1 }
        while m >= 1 { m /= 2; e += 1 }
        let t = (m - 1) / (m + 1)
        let t2 = t * t
        var term = t, sum = 0.0, k = 1.0
        for _ in 0..<40 { sum += term / k; term *= t2; k += 2 }
        return 2 * sum + e * 0.693_147_180_559_945_3
    }

    private static func sin(_ x: Double) -> Double {
        var x = x.truncatingRemainder(dividingBy: 2 * Double.pi)
        if x > Double.pi { x -= 2 * Double.pi }
        if x < -Double.pi { x += 2 * Double.pi }
        var term = x, sum = 0.0
        for n in 1...20 {
            sum += term
            term *= -x * x / Double((2 * n) * (2 * n + 1))
        }
        return sum
    }

    private static func cos(_ x: Double) -> Double { sin(x + Double.pi / 2) }
}
