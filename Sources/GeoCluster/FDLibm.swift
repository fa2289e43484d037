/// `exp` and `atan` computed with the algorithms of fdlibm (Sun Microsystems, 1993:
/// "Permission to use, copy, modify, and distribute this software is freely granted,
/// provided that this notice is preserved"), the implementation behind JavaScript's
/// `Math.exp` and `Math.atan` in V8.
///
/// The C library's versions are just as accurate (within one unit in the last place)
/// but not always the same in that last place. Cluster latitudes go through
/// `360 * atan(exp(y)) / pi`, which multiplies such a difference by about 115, and
/// supercluster's recorded outputs can only be reproduced exactly with these.
enum FDLibm {
    @inline(__always)
    private static func bits(_ high: UInt32, _ low: UInt32) -> Double {
        Double(bitPattern: UInt64(high) << 32 | UInt64(low))
    }

    @inline(__always)
    private static func highWord(_ x: Double) -> UInt32 { UInt32(truncatingIfNeeded: x.bitPattern >> 32) }

    // MARK: exp

    private static let ln2High = [bits(0x3FE6_2E42, 0xFEE0_0000), bits(0xBFE6_2E42, 0xFEE0_0000)]
    private static let ln2Low = [bits(0x3DEA_39EF, 0x3579_3C76), bits(0xBDEA_39EF, 0x3579_3C76)]
    private static let inverseLn2 = bits(0x3FF7_1547, 0x652B_82FE)
    private static let p1 = bits(0x3FC5_5555, 0x5555_553E)
    private static let p2 = bits(0xBF66_C16C, 0x16BE_BD93)
    private static let p3 = bits(0x3F11_566A, 0xAF25_DE2C)
    private static let p4 = bits(0xBEBB_BD41, 0xC5D2_6BF1)
    private static let p5 = bits(0x3E66_3769, 0x72BE_A4D0)
    private static let overflowThreshold = bits(0x4086_2E42, 0xFEFA_39EF)   // 709.78...
    private static let underflowThreshold = bits(0xC087_4910, 0xD52D_3051)  // -745.13...
    private static let twoToMinus1000 = bits(0x0170_0000, 0)
    private static let e = bits(0x4005_BF0A, 0x8B14_5769)

    /// e^x: reduce x to r in [-ln2/2, ln2/2] with x = k ln2 + r, approximate e^r with a
    /// rational function of a degree-5 minimax polynomial, scale by 2^k.
    static func exp(_ x: Double) -> Double {
        var x = x
        let word = highWord(x)
        let negative = word >> 31 == 1
        let sign = negative ? 1 : 0
        let magnitude = word & 0x7FFF_FFFF
        var hi = 0.0, lo = 0.0
        var k = 0

        if magnitude >= 0x4086_2E42 {                      // |x| >= 709.78
            if magnitude >= 0x7FF0_0000 {                  // inf or NaN
                if x.isNaN { return x + x }
                return negative ? 0 : x
            }
            if x > overflowThreshold { return .infinity }
            if x < underflowThreshold { return 0 }
        }

        if magnitude > 0x3FD6_2E42 {                       // |x| > ln2 / 2
            if magnitude < 0x3FF0_A2B2 {                   // and |x| < 1.5 ln2
                if x == 1 { return e }
                hi = x - ln2High[sign]
                lo = ln2Low[sign]
                k = 1 - sign - sign
            } else {
                k = Int(inverseLn2 * x + (negative ? -0.5 : 0.5))
                let t = Double(k)
                hi = x - t * ln2High[0]                    // exact: t * ln2High has trailing zeros
                lo = t * ln2Low[0]
            }
            x = hi - lo
        } else if magnitude < 0x3E30_0000 {                // |x| < 2^-28
            return 1 + x
        }

        let t = x * x
        let twoToK = k >= -1021
            ? bits(UInt32(truncatingIfNeeded: 0x3FF0_0000 + (k << 20)), 0)
            : bits(UInt32(truncatingIfNeeded: 0x3FF0_0000 + ((k + 1000) << 20)), 0)
        let c = x - t * (p1 + t * (p2 + t * (p3 + t * (p4 + t * p5))))
        if k == 0 {
            return 1 - ((x * c) / (c - 2) - x)
        }
        let y = 1 - ((lo - (x * c) / (2 - c)) - hi)
        if k >= -1021 {
            if k == 1024 { return y * 2 * bits(0x7FE0_0000, 0) }
            return y * twoToK
        }
        return y * twoToK * twoToMinus1000
    }

    // MARK: atan

    private static let atanHigh = [bits(0x3FDD_AC67, 0x0561_BB4F), bits(0x3FE9_21FB, 0x5444_2D18),
                                   bits(0x3FEF_730B, 0xD281_F69B), bits(0x3FF9_21FB, 0x5444_2D18)]
    private static let atanLow = [bits(0x3C7A_2B7F, 0x222F_65E2), bits(0x3C81_A626, 0x3314_5C07),
                                  bits(0x3C70_0788, 0x7AF0_CBBD), bits(0x3C91_A626, 0x3314_5C07)]
    private static let aT = [
        bits(0x3FD5_5555, 0x5555_550D), bits(0xBFC9_9999, 0x9998_EBC4), bits(0x3FC2_4924, 0x9200_83FF),
        bits(0xBFBC_71C6, 0xFE23_1671), bits(0x3FB7_45CD, 0xC54C_206E), bits(0xBFB3_B0F2, 0xAF74_9A6D),
        bits(0x3FB1_0D66, 0xA0D0_3D51), bits(0xBFAD_DE2D, 0x52DE_FD9A), bits(0x3FA9_7B4B, 0x2476_0DEB),
        bits(0xBFA2_B444, 0x2C6A_6C2F), bits(0x3F90_AD3A, 0xE322_DA11),
    ]

    /// arctan(x): reduce |x| to a small argument around one of atan(0.5), atan(1),
    /// atan(1.5) or atan(inf), then an odd minimax polynomial of degree 23.
    static func atan(_ x: Double) -> Double {
        var x = x
        let word = highWord(x)
        let negative = word >> 31 == 1
        let magnitude = word & 0x7FFF_FFFF
        let id: Int

        if magnitude >= 0x4410_0000 {                      // |x| >= 2^66, inf or NaN
            if x.isNaN { return x + x }
            return negative ? -atanHigh[3] - atanLow[3] : atanHigh[3] + atanLow[3]
        }
        if magnitude < 0x3FDC_0000 {                       // |x| < 0.4375
            if magnitude < 0x3E40_0000 { return x }        // |x| < 2^-27
            id = -1
        } else {
            x = abs(x)
            if magnitude < 0x3FF3_0000 {                   // |x| < 1.1875
                if magnitude < 0x3FE6_0000 {               // 7/16 <= |x| < 11/16
                    id = 0
                    x = (2 * x - 1) / (2 + x)
                } else {                                   // 11/16 <= |x| < 19/16
                    id = 1
                    x = (x - 1) / (x + 1)
                }
            } else if magnitude < 0x4003_8000 {            // |x| < 2.4375
                id = 2
                x = (x - 1.5) / (1 + 1.5 * x)
            } else {                                       // 2.4375 <= |x| < 2^66
                id = 3
                x = -1 / x
            }
        }
        let z = x * x
        let w = z * z
        let s1 = z * (aT[0] + w * (aT[2] + w * (aT[4] + w * (aT[6] + w * (aT[8] + w * aT[10])))))
        let s2 = w * (aT[1] + w * (aT[3] + w * (aT[5] + w * (aT[7] + w * aT[9]))))
        if id < 0 {
            return x - x * (s1 + s2)
        }
        let result = atanHigh[id] - ((x * (s1 + s2) - atanLow[id]) - x)
        return negative ? -result : result
    }
}
