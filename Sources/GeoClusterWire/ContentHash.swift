/// A 64-bit hash of bytes that is the same in every process and on every run: for entity
/// tags of answers, and for telling whether stored text is still the text some checked
/// fields were read from. Not a defence against anyone who chooses colliding inputs.
///
/// The bytes are read 32 at a time into four independent lanes, each step
/// `lane = (lane ^ word) * K` (a bijection of the lane for a given word, so two inputs of
/// the same length that differ in one lane's words never meet in that lane). The lanes
/// are then folded, the last 0–31 bytes mixed in one at a time (FNV-1a style), then the
/// length, and the result goes through MurmurHash3's 64-bit finaliser. About eight times
/// faster than FNV-1a a byte at a time, whose dependent multiply per byte made it 7% of a
/// server busy with 100 KB cluster answers.
public enum ContentHash {
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let k: UInt64 = 0x9e37_79b9_7f4a_7c15 // 2^64 / golden ratio, odd
        var lanes: (UInt64, UInt64, UInt64, UInt64) =
            (0xcbf2_9ce4_8422_2325, 0x8422_2325_cbf2_9ce4, 0x84de_5cad_a5c3_01b1, 0x27d4_eb2f_1656_67c5)
        func word(_ offset: Int) -> UInt64 {
            UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        var offset = 0
        while offset + 32 <= bytes.count {
            lanes.0 = (lanes.0 ^ word(offset)) &* k
            lanes.1 = (lanes.1 ^ word(offset + 8)) &* k
            lanes.2 = (lanes.2 ^ word(offset + 16)) &* k
            lanes.3 = (lanes.3 ^ word(offset + 24)) &* k
            offset += 32
        }
        var hash = finalMix(lanes.0)
        hash = (hash ^ finalMix(lanes.1)) &* k
        hash = (hash ^ finalMix(lanes.2)) &* k
        hash = (hash ^ finalMix(lanes.3)) &* k
        while offset < bytes.count {
            hash = (hash ^ UInt64(bytes[offset])) &* 0x0000_0100_0000_01b3 // FNV 64-bit prime
            offset += 1
        }
        return finalMix(hash ^ UInt64(bytes.count))
    }

    public static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// MurmurHash3's `fmix64`: every input bit affects every output bit.
    private static func finalMix(_ value: UInt64) -> UInt64 {
        var h = value
        h ^= h >> 33
        h &*= 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h &*= 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return h
    }
}
