/// How crowded a map answer is drawn: the features closer to another one than half the
/// radius, in pixels at the answer's zoom. Supercluster's greedy pass leaves almost none;
/// a grid that merges only within its cells leaves some at cell and block edges. Used by
/// the tests and benchmarks that compare the live algorithm's display with the radius
/// algorithm's.
public enum DisplayCrowding {
    /// The indices of the features that have another feature closer than `radius / 2`
    /// pixels at `zoom` (tiles `extent` pixels wide), in ascending order.
    public static func crowded(_ coordinates: [Coordinate], zoom: Int, radius: Double, extent: Int) -> [Int] {
        let scale = Double(extent) * Double(UInt64(1) << UInt64(max(0, min(zoom, 40))))
        let limit = radius / 2
        guard limit > 0, !coordinates.isEmpty else { return [] }
        let xy = coordinates.map { SIMD2(WebMercator.x(longitude: $0.longitude) * scale,
                                         WebMercator.y(latitude: $0.latitude) * scale) }
        // Buckets `limit` pixels wide: a pair closer than `limit` lies in the same or
        // neighbouring buckets. Positions that do not project (a pole, not a number) are
        // left out.
        func bucket(_ p: SIMD2<Double>) -> SIMD2<Int64> {
            func cell(_ v: Double) -> Int64 { Int64(max(-1e15, min(1e15, (v / limit).rounded(.down)))) }
            return SIMD2(cell(p.x), cell(p.y))
        }
        var buckets: [SIMD2<Int64>: [Int]] = [:]
        buckets.reserveCapacity(xy.count)
        for i in xy.indices where xy[i].x.isFinite && xy[i].y.isFinite { buckets[bucket(xy[i]), default: []].append(i) }
        var crowded = [Bool](repeating: false, count: xy.count)
        for i in xy.indices where xy[i].x.isFinite && xy[i].y.isFinite {
            let b = bucket(xy[i])
            search: for dy in -1...1 {
                for dx in -1...1 {
                    guard let others = buckets[b &+ SIMD2(Int64(dx), Int64(dy))] else { continue }
                    for j in others where j != i {
                        let d = xy[j] - xy[i]
                        if (d * d).sum() < limit * limit {
                            crowded[i] = true
                            break search
                        }
                    }
                }
            }
        }
        return crowded.indices.filter { crowded[$0] }
    }
}
