/// The shortest decimal digits that read back as a given double, for the doubles that
/// answers are mostly made of: positive values from 2^-12 up to 2^52 (map coordinates,
/// distances, fractions), whose exact value times a power of ten of at most 10^21 fits
/// in 128 bits.
///
/// The method is Steele and White's free-format shortest output in the form Ryu (Ulf
/// Adams, PLDI 2018) gives it: scale the value and the two ends of the interval of reals
/// that round to it (half a unit in the last place either side; a quarter below a power
/// of two) by a power of ten, so that the interval holds at least 21 integers; then drop
/// decimal digits from all three while the interval still holds a shorter number, and
/// round the value's own digits at the last one dropped. Ryu finds the scaled values with
/// tables of 5^k; within this range an exact 128-bit product and a shift give them
/// directly, and with them whether the part shifted out was zero, which decides the
/// ties. The digits are those of Swift's `description` (both are the shortest that round
/// trip and, among them, the nearest to the value); the tests hold the two equal.
enum ShortestDigits {
    /// The digits of `value` as an integer `digits` without trailing zeros and the power
    /// of ten it is scaled by, so that `value` reads back from `digits` × 10^`exponent`;
    /// `nil` outside the range above (the caller then asks Swift for them).
    static func of(_ value: Double) -> (digits: UInt64, exponent: Int)? {
        let bits = value.bitPattern
        let biasedExponent = Int(truncatingIfNeeded: bits >> 52)  // the sign bit is 0 for the positive values taken
        let fraction = bits & (1 << 52 - 1)
        // value = m2 × 2^e2, with the implicit leading bit of a normal double.
        let e2 = biasedExponent - 1075
        guard e2 >= minimumExponent, e2 <= -1 else { return nil }
        let m2 = fraction | 1 << 52
        // A double with an even significand reads back from the ends of its interval too
        // (ties round to even).
        let acceptsBounds = m2 & 1 == 0
        // The value in quarters of its last place; the interval's ends lie 2 quarters above
        // and 2 below it, or 1 below a power of two (whose lower neighbour is half as far).
        let mv = m2 << 2

        let q = scales[e2 - minimumExponent]
        let power = powersOfTen[q]
        let shift = 2 - e2
        let lowBits = UInt128(1) << shift - 1
        let exactV = UInt128(mv) * power
        let exactP = exactV + power << 1
        let exactM = exactV - (fraction == 0 ? power : power << 1)
        var vr = UInt64(truncatingIfNeeded: exactV >> shift)
        var vp = UInt64(truncatingIfNeeded: exactP >> shift)
        var vm = UInt64(truncatingIfNeeded: exactM >> shift)
        // Whether every digit dropped from vr (from vm) so far was 0: at first, whether the
        // scaling left no fraction.
        var vrDroppedZeros = exactV & lowBits == 0
        var vmDroppedZeros = false
        if acceptsBounds {
            vmDroppedZeros = exactM & lowBits == 0
        } else if exactP & lowBits == 0 {
            vp -= 1  // the upper end itself would read back as the next double
        }

        var dropped = 0
        var digits: UInt64
        if !vrDroppedZeros && !vmDroppedZeros {
            // The usual case: neither the value nor the lower end is a short decimal, so
            // no digit dropped is followed by zeros only and there are no ties. Two digits
            // at a time while the interval allows.
            var roundsUp = false
            func drop(_ count: Int, digitsBy divisor: UInt64) {
                roundsUp = vr % divisor >= divisor / 2
                vr /= divisor
                vp /= divisor
                vm /= divisor
                dropped += count
            }
            while vp / 100 > vm / 100 { drop(2, digitsBy: 100) }
            if vp / 10 > vm / 10 { drop(1, digitsBy: 10) }
            digits = vr + (vr == vm || roundsUp ? 1 : 0)
        } else {
            var lastDropped: UInt64 = 0
            func dropDigit() {
                vrDroppedZeros = vrDroppedZeros && lastDropped == 0
                lastDropped = vr % 10
                vr /= 10
                vp /= 10
                vm /= 10
                dropped += 1
            }
            while vp / 10 > vm / 10 {
                vmDroppedZeros = vmDroppedZeros && vm % 10 == 0
                dropDigit()
            }
            if vmDroppedZeros {
                // The lower end is itself a shorter number that reads back.
                while vm != 0, vm % 10 == 0 { dropDigit() }
            }
            if vrDroppedZeros, lastDropped == 5, vr % 2 == 0 {
                lastDropped = 4  // exactly half: round to even
            }
            let outsideBelow = vr == vm && (!acceptsBounds || !vmDroppedZeros)
            digits = vr + (outsideBelow || lastDropped >= 5 ? 1 : 0)
        }
        var exponent = dropped - q
        while digits != 0, digits % 10 == 0 {
            digits /= 10
            exponent += 1
        }
        return (digits, exponent)
    }

    /// The lowest binary exponent taken: 2^55 × 10^21 (the largest product) stays below
    /// 2^128.
    static let minimumExponent = -64

    /// 10^0 through 10^21.
    static let powersOfTen: [UInt128] = {
        var powers: [UInt128] = [1]
        for _ in 1...21 { powers.append(powers[powers.count - 1] * 10) }
        return powers
    }()

    /// For each binary exponent e2 from `minimumExponent` to -1, the least q with
    /// 10^q ≥ 7 × 2^(2−e2): the scaled interval (3 or 4 quarters of the last place) then
    /// holds at least 21 integers, so the first pass always drops a digit and the digit it
    /// rounds at is one of the value's own.
    static let scales: [Int] = (minimumExponent ... -1).map { e2 in
        let needed = UInt128(7) << (2 - e2)
        return powersOfTen.firstIndex { $0 >= needed } ?? powersOfTen.count - 1
    }
}
