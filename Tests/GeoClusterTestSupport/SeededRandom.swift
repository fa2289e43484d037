/// SplitMix64: a tiny deterministic generator so that every randomised test replays
/// exactly from its seed.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func unit() -> Double { Double.random(in: 0..<1, using: &self) }
    public mutating func between(_ low: Double, _ high: Double) -> Double { Double.random(in: low...high, using: &self) }
}
