import Foundation
import Testing
@testable import GeoCluster
@testable import GeoClusterWire

@Suite struct JSONValueTests {
    // MARK: - Helpers

    /// SplitMix64, so that every randomised test replays exactly from its seed.
    struct SplitMix64: RandomNumberGenerator {
        private var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    private static func parseError(_ bytes: [UInt8], maxDepth: Int = 64) -> JSONParseError? {
        do {
            _ = try JSONValue.parse(bytes, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    private static func parseError(_ text: String, maxDepth: Int = 64) -> JSONParseError? {
        parseError(Array(text.utf8), maxDepth: maxDepth)
    }

    private static func encoded(_ number: Double) -> String { JSONValue.number(number).jsonString }

    // MARK: - Round trips

    @Test func compactDocumentsRoundTripByteForByte() throws {
        let texts = [
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":7,"properties":{"name":"Niagara Falls","scalerank":2,"tags":[],"meta":{},"ok":true,"gone":null,"ratio":-0.25},"geometry":{"type":"Point","coordinates":[-79.04411780507252,43.08771393436908]}}]}"#,
            #"[[[[]]],{"a":{"b":{"c":[1,2,{"d":"e"}]}}},"",0,-1,1e+21,1.5e-7,false]"#,
            #""just a string""#,
            "null",
            "-0.5",
        ]
        for text in texts {
            let value = try JSONValue.parse(text)
            #expect(value.jsonString == text)
            #expect(try JSONValue.parse(value.jsonString) == value)
        }
    }

    @Test func whitespaceAroundAndInsideIsAcceptedAndDropped() throws {
        let value = try JSONValue.parse(" \t\r\n{ \"a\" : [ 1 , 2 ] ,\n\"b\":{ } } \n")
        #expect(value.jsonString == #"{"a":[1,2],"b":{}}"#)
    }

    @Test func literalsBuildTheSameValuesAsParsing() throws {
        let built: JSONValue = [
            "name": "Cape Canaveral",
            "rank": 3,
            "size": 2.5,
            "open": true,
            "note": nil,
            "coordinates": [-80.6, 28.4],
            "nested": ["list": [1, "two", [3]]],
        ]
        let parsed = try JSONValue.parse(
            #"{"name":"Cape Canaveral","rank":3,"size":2.5,"open":true,"note":null,"coordinates":[-80.6,28.4],"nested":{"list":[1,"two",[3]]}}"#)
        #expect(built == parsed)
        #expect(built.jsonString == parsed.jsonString)
    }

    @Test func encodeAppendsToTheBuffer() {
        var buffer = Array("x=".utf8)
        JSONValue.array([1, "a"]).encode(into: &buffer)
        let object: JSONObject = ["k": .null]
        object.encode(into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"x=[1,"a"]{"k":null}"#)
    }

    @Test func slicesParseInPlaceAndCountOffsetsFromTheirStart() throws {
        let lines = Array("{\"a\":1}\n[2,3]\n{\"b\":x}\n".utf8)
        let parts = lines.split(separator: UInt8(ascii: "\n"))
        #expect(try JSONValue.parse(parts[0]) == ["a": 1])
        #expect(try JSONValue.parse(parts[1]) == [2, 3])
        do {
            _ = try JSONValue.parse(parts[2])
            Issue.record("accepted an invalid line")
        } catch {
            #expect(error == JSONParseError(kind: .unexpectedCharacter, byteOffset: 5))
        }
    }

    // MARK: - Numbers

    @Test(arguments: [
        (164, "164"), (-3, "-3"), (0, "0"), (-0.0, "0"), (100, "100"), (0.5, "0.5"), (1.5, "1.5"),
        (-123.456, "-123.456"), (0.1, "0.1"), (1.0 / 3, "0.3333333333333333"), (0.1 + 0.2, "0.30000000000000004"),
        (1e-7, "1e-7"), (-1e-7, "-1e-7"), (1.5e-7, "1.5e-7"), (-2.5e-8, "-2.5e-8"), (1e-6, "0.000001"),
        (1.234e-5, "0.00001234"), (123e-20, "1.23e-18"), (Double.leastNonzeroMagnitude, "5e-324"),
        (2.2250738585072014e-308, "2.2250738585072014e-308"),
        (9007199254740991, "9007199254740991"), (9007199254740992, "9007199254740992"),
        (1e16, "10000000000000000"), (9.223372036854776e18, "9223372036854776000"),
        (1e20, "100000000000000000000"), (1.2345678901234568e20, "123456789012345680000"),
        (9.999999999999999e20, "999999999999999900000"), (1e21, "1e+21"), (1.5e21, "1.5e+21"),
        (-1e21, "-1e+21"), (1.7976931348623157e308, "1.7976931348623157e+308"),
        (-79.04411780507252, "-79.04411780507252"), (43.08771393436908, "43.08771393436908"),
        (Double.infinity, "null"), (-Double.infinity, "null"), (Double.nan, "null"),
    ] as [(Double, String)])
    func numbersEncodeAsJavaScriptWritesThem(value: Double, expected: String) {
        #expect(Self.encoded(value) == expected)
    }

    /// Random doubles of every magnitude: the text parses back to the same double, has
    /// the digits of Swift's shortest representation, and follows JavaScript's layout
    /// (plain notation exactly for decimal exponents -7 < e < 21, no trailing zeros after a
    /// point, an exponent with an explicit sign).
    @Test func randomDoublesEncodeShortestAndRoundTrip() throws {
        var rng = SplitMix64(seed: 0x5EED_0002)
        // Bit patterns cover every exponent; coordinates and large integers are the
        // values answers are made of.
        let values = (0..<20_000).map { _ in Double(bitPattern: rng.next()) }
            + (0..<5_000).map { _ in Double(rng.next() % 360_000_000_000) / 1e9 - 180 + 1e-12 }
            + [0x1p53 + 2, 0x1p60, 1e17, 1.2345678901234568e20, 0.5, 0.000001, 1.5e-7]
        for value in values {
            guard value.isFinite else { continue }
            let text = Self.encoded(value)
            let parsed = try #require(Double(text), "\(text)")
            #expect(parsed.bitPattern == value.bitPattern || (value == 0 && parsed == 0), "\(value) wrote \(text)")
            let significant = { (text: String) in
                text.split(separator: "e")[0].filter(\.isNumber).drop { $0 == "0" }.reversed().drop { $0 == "0" }.reversed()
            }
            #expect(String(significant(text)) == String(significant(value.magnitude.description)), "\(value) wrote \(text)")
            let exponent = value == 0 ? 0 : Int(log10(value.magnitude).rounded(.down))
            if value.magnitude >= 1e21 || (value != 0 && value.magnitude < 1e-6) {
                #expect(text.contains("e+") || text.contains("e-"), "\(value) (10^\(exponent)) wrote \(text)")
            } else {
                #expect(!text.contains("e"), "\(value) wrote \(text)")
                if text.contains(".") { #expect(text.last != "0", "\(value) wrote \(text)") }
            }
        }
    }

    /// The digits found by 128-bit products (`ShortestDigits`) are Swift's shortest digits,
    /// over the whole range it takes: every binary exponent there with random, sparse and
    /// full significands, powers of two (whose interval is lopsided), short decimals
    /// (whose scaled value or lower end is exact, the ties), coordinates and their
    /// neighbours. Outside the range it declines.
    @Test func shortestDigitsAreSwiftsWhereTheyAreFound() {
        func swiftDigits(_ value: Double) -> (digits: UInt64, exponent: Int) {
            let text = value.description
            let parts = text.split(separator: "e")
            var exponent = parts.count == 2 ? Int(parts[1]) ?? 0 : 0
            var digits: UInt64 = 0
            var pointSeen = false
            for character in parts[0] {
                if character == "." {
                    pointSeen = true
                } else if let digit = character.wholeNumberValue {
                    digits = digits * 10 + UInt64(digit)
                    if pointSeen { exponent -= 1 }
                }
            }
            while digits != 0, digits % 10 == 0 {
                digits /= 10
                exponent += 1
            }
            return (digits, exponent)
        }
        var rng = SplitMix64(seed: 0x5EED_0004)
        var values: [Double] = []
        for e2 in ShortestDigits.minimumExponent ... -1 {
            let exponentBits = UInt64(e2 + 1075) << 52
            values.append(Double(bitPattern: exponentBits))
            values.append(Double(bitPattern: exponentBits).nextDown)
            for _ in 0..<300 {
                let fraction = rng.next() & (1 << 52 - 1)
                values.append(Double(bitPattern: exponentBits | fraction))
                values.append(Double(bitPattern: exponentBits | fraction & 0xFF))
                values.append(Double(bitPattern: exponentBits | (fraction | 0xF_FFFF_FFFF_FF00) & (1 << 52 - 1)))
            }
        }
        for _ in 0..<20_000 {
            let scale = [1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8][Int(rng.next() % 8)]
            values.append(Double(rng.next() % 100_000_000) / scale)
            let coordinate = Double(rng.next() % 360_000_000_000_000) / 1e12
            values += [coordinate, coordinate.nextUp, coordinate.nextDown]
        }
        var found = 0
        for value in values where value > 0 {
            guard let shortest = ShortestDigits.of(value) else {
                #expect(value < 0x1p-12 || value >= 0x1p52, "\(value) declined")
                continue
            }
            found += 1
            let expected = swiftDigits(value)
            #expect(shortest.digits == expected.digits && shortest.exponent == expected.exponent,
                    "\(value): \(shortest.digits)e\(shortest.exponent), Swift \(expected.digits)e\(expected.exponent)")
        }
        #expect(found > 100_000)
        for declined in [0x1p-12.nextDown, 0x1p52, 1e300, Double.leastNonzeroMagnitude, Double.leastNormalMagnitude] {
            #expect(ShortestDigits.of(declined) == nil, "\(declined)")
        }
    }

    /// Integers are written straight to their place, so their digits are counted first:
    /// at every power of ten and either side of it, and at random.
    @Test func digitCountsAreThoseOfTheText() {
        var rng = SplitMix64(seed: 0x5EED_0005)
        var values: [UInt64] = [0, UInt64.max]
        var power: UInt64 = 1
        for _ in 0...19 {
            values += [power - 1, power, power + 1]
            power = power.multipliedReportingOverflow(by: 10).partialValue
        }
        values += (0..<10_000).map { _ in rng.next() >> (rng.next() % 64) }
        for value in values {
            #expect(JSONValue.digitCount(value) == String(value).count, "\(value)")
        }
    }

    /// Whole numbers are written as their doubles are, below 2^53 and beyond it.
    @Test func wholeNumbersEncodeAsTheirDoubles() {
        var rng = SplitMix64(seed: 0x5EED_0003)
        let values = (0..<20_000).map { _ in Int(truncatingIfNeeded: rng.next()) >> Int(rng.next() % 64) }
            + Array(-20...20) + [1 << 53 - 1, 1 << 53, 1 << 53 + 1, -(1 << 53) - 1, Int.max, Int.min]
        for value in values {
            var direct: [UInt8] = []
            JSONValue.encodeWholeNumber(value, into: &direct)
            #expect(String(decoding: direct, as: UTF8.self) == Self.encoded(Double(value)), "\(value)")
        }
    }

    @Test(arguments: [
        ("0", 0.0), ("-0", -0.0), ("7", 7), ("-12", -12), ("1.5e3", 1500), ("1E-2", 0.01), ("2e+2", 200),
        ("0.1", 0.1), ("123456789012345", 123456789012345), ("9007199254740993", 9007199254740992),
        ("12345678901234567890", 12345678901234567890.0), ("0.30000000000000004", 0.30000000000000004),
        ("3.14159265358979323846264338327950288", Double.pi), ("2.2250738585072014e-308", 2.2250738585072014e-308),
        ("4.9406564584124654e-324", Double.leastNonzeroMagnitude), ("1e-400", 0), ("1.7976931348623157e308", 1.7976931348623157e308),
        ("0.000000000000000000000000000001", 1e-30), ("1000000000000000000000000", 1e24),
    ] as [(String, Double)])
    func numbersParseToTheNearestDouble(text: String, expected: Double) throws {
        let value = try #require(try JSONValue.parse(text).doubleValue)
        #expect(value.bitPattern == expected.bitPattern, "\(text) gave \(value)")
    }

    @Test func randomNumberTextsParseLikeTheStandardLibrary() throws {
        var rng = SplitMix64(seed: 0x5EED_0001)
        func digits(_ count: Int, leadingNonZero: Bool) -> String {
            var text = ""
            for index in 0..<count {
                let low = index == 0 && leadingNonZero ? 1 : 0
                text.append(Character(Unicode.Scalar(UInt8(ascii: "0") + UInt8(Int.random(in: low...9, using: &rng)))))
            }
            return text
        }
        for _ in 0..<20_000 {
            var text = Bool.random(using: &rng) ? "-" : ""
            text += Int.random(in: 0..<5, using: &rng) == 0 ? "0" : digits(Int.random(in: 1...22, using: &rng), leadingNonZero: true)
            if Bool.random(using: &rng) { text += "." + digits(Int.random(in: 1...22, using: &rng), leadingNonZero: false) }
            if Bool.random(using: &rng) {
                text += ["e", "E", "e+", "e-", "E-"].randomElement(using: &rng) ?? "e"
                text += String(Int.random(in: 0...330, using: &rng))
            }
            let expected = try #require(Double(text))
            if expected.isFinite {
                let value = try #require(try JSONValue.parse(text).doubleValue)
                #expect(value.bitPattern == expected.bitPattern, "\(text) gave \(value), expected \(expected)")
            } else {
                #expect(Self.parseError(text) == JSONParseError(kind: .numberOutOfRange, byteOffset: 0), "\(text)")
            }
        }
    }

    @Test func everyFiniteDoubleSurvivesEncodeAndParse() throws {
        var rng = SplitMix64(seed: 0x5EED_0002)
        var checked = 0
        while checked < 20_000 {
            let value = Double(bitPattern: rng.next())
            guard value.isFinite else { continue }
            checked += 1
            let text = Self.encoded(value)
            let back = try #require(try JSONValue.parse(text).doubleValue)
            #expect(back == value, "\(value) encoded as \(text) parsed as \(back)")
        }
    }

    @Test func intValueOnlyForExactIntegers() {
        #expect(JSONValue.number(3).intValue == 3)
        #expect(JSONValue.number(-0.0).intValue == 0)
        #expect(JSONValue.number(3.5).intValue == nil)
        #expect(JSONValue.number(1e300).intValue == nil)
        #expect(JSONValue.number(.nan).intValue == nil)
        #expect(JSONValue.string("3").intValue == nil)
    }

    // MARK: - Strings

    @Test func escapesDecode() throws {
        let value = try JSONValue.parse(#""a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u4e16\u0000z""#)
        #expect(value.stringValue == "a\"b\\c/d\u{8}\u{C}\n\r\tAé世\u{0}z")
    }

    @Test func stringsEscapeOnlyWhatJSONStringifyEscapes() {
        let string: JSONValue = .string("q\" b\\ /\u{8}\u{C}\n\r\t\u{0}\u{1}\u{1F}\u{7F}é\u{2028}😀")
        #expect(string.jsonString == "\"q\\\" b\\\\ /\\b\\f\\n\\r\\t\\u0000\\u0001\\u001f\u{7F}é\u{2028}😀\"")
        let key: JSONValue = ["a\"\n": 1]
        #expect(key.jsonString == #"{"a\"\n":1}"#)
    }

    @Test func unicodeEscapesAndRawUTF8Agree() throws {
        #expect(try JSONValue.parse(#""\ud83d\ude00""#) == "😀")
        #expect(try JSONValue.parse(#""\uD834\uDD1E clef""#) == "𝄞 clef")
        #expect(try JSONValue.parse(#""\udbff\udfff""#) == .string("\u{10FFFF}"))
        let text = "héllo 世界 😀 🇫🇷 👨‍👩‍👧 \u{FFFF} \u{10FFFF}"
        let value = try JSONValue.parse("\"" + text + "\"")
        #expect(value.stringValue == text)
        #expect(value.jsonString == "\"" + text + "\"")
    }

    @Test func stringsCompareByBytesNotByCanonicalEquivalence() throws {
        let composed = "\u{E9}"
        let decomposed = "e\u{301}"
        #expect(composed == decomposed)  // Swift's String equality
        #expect(JSONValue.string(composed) != JSONValue.string(decomposed))
        let object = try JSONValue.parse("{\"\(composed)\":1,\"\(decomposed)\":2}")
        #expect(object.objectValue?.count == 2)
        #expect(object[composed] == 1)
        #expect(object[decomposed] == 2)
    }

    // MARK: - Errors

    @Test(arguments: [
        ("", JSONParseError.Kind.unexpectedEnd, 0),
        ("   ", .unexpectedEnd, 3),
        ("[1,2", .unexpectedEnd, 4),
        (#"{"a":"#, .unexpectedEnd, 5),
        (#""abc"#, .unexpectedEnd, 4),
        ("tru", .unexpectedEnd, 3),
        ("-", .unexpectedEnd, 1),
        ("1.", .unexpectedEnd, 2),
        ("1e+", .unexpectedEnd, 3),
        (#""\u12"#, .unexpectedEnd, 5),
        (#""\ud83d"#, .unexpectedEnd, 7),
        (#"{"a":1,}"#, .unexpectedCharacter, 7),
        ("[1,]", .unexpectedCharacter, 3),
        ("[1 2]", .unexpectedCharacter, 3),
        (#"{"a" 1}"#, .unexpectedCharacter, 5),
        ("{a:1}", .unexpectedCharacter, 1),
        ("'a'", .unexpectedCharacter, 0),
        ("+1", .unexpectedCharacter, 0),
        (".5", .unexpectedCharacter, 0),
        ("NaN", .unexpectedCharacter, 0),
        ("Infinity", .unexpectedCharacter, 0),
        ("trux", .unexpectedCharacter, 3),
        ("[0x10]", .unexpectedCharacter, 2),
        ("\u{FEFF}1", .unexpectedCharacter, 0),
        (#""a\x""#, .invalidEscape, 3),
        (#""\u12G4""#, .invalidEscape, 5),
        (#""\ud800""#, .invalidEscape, 1),
        (#""\udc00""#, .invalidEscape, 1),
        (#""ab\ud83dx""#, .invalidEscape, 3),
        (#""\ud83d\u0041""#, .invalidEscape, 1),
        (#""\ud83d\ud83d""#, .invalidEscape, 1),
        ("01", .invalidNumber, 1),
        ("-01", .invalidNumber, 2),
        ("-a", .invalidNumber, 1),
        ("-Infinity", .invalidNumber, 1),
        ("1.e5", .invalidNumber, 2),
        ("1ex", .invalidNumber, 2),
        ("1e309", .numberOutOfRange, 0),
        ("[-1e400]", .numberOutOfRange, 1),
        ("1" + String(repeating: "0", count: 400), .numberOutOfRange, 0),
        ("\"a\u{1}b\"", .controlCharacterInString, 2),
        ("\"line\nbreak\"", .controlCharacterInString, 5),
        ("\"tab\t\"", .controlCharacterInString, 4),
        (#"{"a":1,"b":2,"a":3}"#, .duplicateKey, 13),
        (#"{"a":{"x":1},"b":{"x":2,"x":3}}"#, .duplicateKey, 24),
        ("1 2", .trailingData, 2),
        ("{} x", .trailingData, 3),
        ("nullnull", .trailingData, 4),
        ("0x10", .trailingData, 1),
    ] as [(String, JSONParseError.Kind, Int)])
    func errorsNameTheirKindAndOffset(text: String, kind: JSONParseError.Kind, offset: Int) {
        let error = Self.parseError(text)
        #expect(error?.kind == kind, "\(text.debugDescription): \(error?.description ?? "accepted")")
        #expect(error?.byteOffset == offset, "\(text.debugDescription): \(error?.description ?? "accepted")")
    }

    @Test(arguments: [
        ([0x22, 0xC0, 0x80, 0x22], JSONParseError.Kind.invalidUTF8, 1),  // overlong NUL
        ([0x22, 0xC1, 0xBF, 0x22], .invalidUTF8, 1),  // overlong 2-byte
        ([0x22, 0xE0, 0x80, 0xAF, 0x22], .invalidUTF8, 1),  // overlong '/'
        ([0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22], .invalidUTF8, 1),  // overlong 4-byte
        ([0x22, 0x61, 0xED, 0xA0, 0x80, 0x22], .invalidUTF8, 2),  // U+D800 encoded directly
        ([0x22, 0xED, 0xBF, 0xBF, 0x22], .invalidUTF8, 1),  // U+DFFF encoded directly
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], .invalidUTF8, 1),  // above U+10FFFF
        ([0x22, 0xE2, 0x82, 0x22], .invalidUTF8, 1),  // truncated euro sign
        ([0x22, 0xC3, 0x41, 0x22], .invalidUTF8, 1),  // missing continuation
        ([0x22, 0x80, 0x22], .invalidUTF8, 1),  // stray continuation
        ([0x22, 0xFF, 0x22], .invalidUTF8, 1),
        ([0x22, 0x5C, 0x6E, 0xE9, 0x22], .invalidUTF8, 3),  // Latin-1 after an escape
        ([0x22, 0xE2, 0x82], .unexpectedEnd, 3),  // cut off by the end of input
        ([0xC3, 0xA9], .unexpectedCharacter, 0),  // non-ASCII outside a string
    ] as [([UInt8], JSONParseError.Kind, Int)])
    func malformedUTF8IsRejected(bytes: [UInt8], kind: JSONParseError.Kind, offset: Int) {
        #expect(Self.parseError(bytes) == JSONParseError(kind: kind, byteOffset: offset))
    }

    @Test func wellFormedUTF8BoundariesAreAccepted() throws {
        let boundaries: [[UInt8]] = [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        for sequence in boundaries {
            let value = try JSONValue.parse([0x22] + sequence + [0x22])
            #expect(Array(try #require(value.stringValue).utf8) == sequence)
        }
    }

    @Test func errorsCarryAMessageAndACode() {
        let error = Self.parseError(#"{"a":1 x}"#)
        #expect(error?.message == "unexpected character 'x' at byte 7, expected ',' or '}'")
        #expect(error?.description == error?.message)
        #expect(error?.code == "invalid_json")
        #expect(Self.parseError([0x22, 0xFF, 0x22])?.code == "invalid_utf8")
        #expect(Self.parseError("[[1]]", maxDepth: 1)?.code == "nesting_too_deep")
        #expect(Self.parseError(#"{"a":1,"a":2}"#)?.code == "duplicate_key")
        #expect(Self.parseError(#"{"a":1,"a":2}"#)?.message.contains("\"a\"") == true)
        #expect(Self.parseError("1e999")?.code == "number_out_of_range")
        #expect(Self.parseError("\"\u{1}\"")?.message == "unescaped control character byte 0x01 in string at byte 1")
    }

    @Test func maxDepthBoundsNesting() throws {
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try JSONValue.parse(deepest).jsonString == deepest)
        let tooDeep = "[" + deepest + "]"
        #expect(Self.parseError(tooDeep) == JSONParseError(kind: .nestingTooDeep, byteOffset: 64))

        let objects = String(repeating: #"{"a":"#, count: 10) + "1" + String(repeating: "}", count: 10)
        #expect(try JSONValue.parse(objects, maxDepth: 10)["a"]?["a"] != nil)
        #expect(Self.parseError(objects, maxDepth: 9) == JSONParseError(kind: .nestingTooDeep, byteOffset: 45))

        #expect(try JSONValue.parse("\"scalar\"", maxDepth: 0) == "scalar")
        #expect(Self.parseError(" []", maxDepth: 0) == JSONParseError(kind: .nestingTooDeep, byteOffset: 1))
        #expect(Self.parseError("[[],[[]]]", maxDepth: 2) == JSONParseError(kind: .nestingTooDeep, byteOffset: 5))
    }

    @Test func duplicateKeysAreCaughtInLargeObjectsToo() throws {
        var text = "{"
        for index in 0..<100 { text += "\"k\(index)\":\(index)," }
        let duplicateOffset = text.utf8.count
        text += #""k57":0}"#
        #expect(Self.parseError(text) == JSONParseError(kind: .duplicateKey, byteOffset: duplicateOffset))

        var unique = "{"
        for index in 0..<5_000 { unique += (index == 0 ? "" : ",") + "\"k\(index)\":\(index)" }
        let object = try #require(try JSONValue.parse(unique + "}").objectValue)
        object._checkInvariants()
        #expect(object.count == 5_000)
        #expect(object["k4321"] == 4321)
        #expect(object.keys.prefix(3) == ["k0", "k1", "k2"])
    }

    // MARK: - Equality and objects

    @Test func objectEqualityIgnoresOrderButArraysDoNot() throws {
        let a = try JSONValue.parse(#"{"a":1,"b":[1,2],"c":{"x":null,"y":"z"}}"#)
        let b = try JSONValue.parse(#"{"c":{"y":"z","x":null},"b":[1,2],"a":1}"#)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
        #expect(a.jsonString != b.jsonString)  // output keeps each one's order

        #expect(try a != JSONValue.parse(#"{"a":1,"b":[2,1],"c":{"x":null,"y":"z"}}"#))
        #expect(try a != JSONValue.parse(#"{"a":1,"b":[1,2],"c":{"x":null,"y":"z"},"d":0}"#))
        #expect(try a != JSONValue.parse(#"{"a":1,"b":[1,2],"c":{"x":null,"w":"z"}}"#))
        #expect(try a != JSONValue.parse(#"{"a":"1","b":[1,2],"c":{"x":null,"y":"z"}}"#))
        #expect(JSONValue.null != false)
        #expect(JSONValue.number(0) != false)
        #expect(JSONValue.number(0) == .number(-0.0))
        #expect(JSONValue.number(.nan) == .number(.nan))
        #expect(Set<JSONValue>([.number(.nan), .number(-.nan), .number(0), .number(-0.0)]).count == 2)
    }

    @Test func largeObjectsCompareWithoutRegardToOrder() {
        var forward = JSONObject()
        var backward = JSONObject()
        for index in 0..<40 { forward["k\(index)"] = .number(Double(index)) }
        for index in (0..<40).reversed() { backward["k\(index)"] = .number(Double(index)) }
        #expect(forward == backward)
        #expect(forward.hashValue == backward.hashValue)
        backward["k7"] = "changed"
        #expect(forward != backward)
    }

    @Test func objectSubscriptReplacesInPlaceAppendsAndRemoves() {
        var object: JSONObject = ["a": 1, "b": 2, "c": 3]
        object["b"] = "two"
        object["d"] = 4
        object["a"] = nil
        #expect(object.keys == ["b", "c", "d"])
        #expect(JSONValue.object(object).jsonString == #"{"b":"two","c":3,"d":4}"#)
        #expect(object.removeValue(forKey: "c") == 3)
        #expect(object.removeValue(forKey: "zz") == nil)
        #expect(object.map(\.key) == ["b", "d"])
        #expect(object[1].value == 4)
        #expect(JSONObject([("x", 1), ("y", 2), ("x", 3)]).description == #"{"x":3,"y":2}"#)
    }

    @Test func objectMatchesAReferenceModelUnderRandomEdits() {
        var rng = SplitMix64(seed: 0x5EED_0003)
        var object = JSONObject()
        var model: [(key: String, value: JSONValue)] = []
        for step in 0..<5_000 {
            let key = "key\(Int.random(in: 0..<40, using: &rng))"
            if Int.random(in: 0..<4, using: &rng) == 0 {
                object[key] = nil
                model.removeAll { $0.key == key }
            } else {
                let value = JSONValue.number(Double(step))
                object[key] = value
                if let index = model.firstIndex(where: { $0.key == key }) {
                    model[index].value = value
                } else {
                    model.append((key, value))
                }
            }
            object._checkInvariants()
            #expect(object.keys == model.map(\.key))
            #expect(object.values == model.map(\.value))
        }
    }

    @Test func accessorsAnswerOnlyForTheirOwnCase() throws {
        let value = try JSONValue.parse(#"{"list":[10,"x",true,null],"flag":false}"#)
        #expect(value["list"]?[0]?.doubleValue == 10)
        #expect(value["list"]?[1]?.stringValue == "x")
        #expect(value["list"]?[2]?.boolValue == true)
        #expect(value["list"]?[3]?.isNull == true)
        #expect(value["list"]?[4] == nil)
        #expect(value["list"]?[-1] == nil)
        #expect(value["missing"] == nil)
        #expect(value["flag"]?.boolValue == false)
        #expect(value["list"]?.arrayValue?.count == 4)
        #expect(value.objectValue?.keys == ["list", "flag"])
        #expect(value[0] == nil)
        #expect(value["list"]?["key"] == nil)
        #expect(value["flag"]?.stringValue == nil)
        #expect(value.isNull == false)
        #expect(JSONValue.string("1").doubleValue == nil)
    }

    // MARK: - Random documents

    private static func randomString(_ rng: inout SplitMix64) -> String {
        let pool: [Unicode.Scalar] = [
            "a", "Z", "0", " ", "/", "\"", "\\", "\u{0}", "\u{1}", "\u{8}", "\n", "\t", "\u{1F}", "\u{7F}",
            "é", "ß", "世", "\u{2028}", "\u{FEFF}", "\u{FFFF}", "😀", "𝄞", "\u{10FFFF}", "\u{301}",
        ]
        var string = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0..<10, using: &rng) {
            string.append(pool[Int.random(in: 0..<pool.count, using: &rng)])
        }
        return String(string)
    }

    private static func randomNumber(_ rng: inout SplitMix64) -> Double {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            return Double(Int.random(in: -1_000_000...1_000_000, using: &rng))
        case 1:
            return Double(Int.random(in: -10_000_000...10_000_000, using: &rng)) / 1e5
        case 2:
            return Double.random(in: -180...180, using: &rng)
        default:
            while true {
                let value = Double(bitPattern: rng.next())
                if value.isFinite { return value }
            }
        }
    }

    private static func randomValue(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth >= 4 ? 4 : 6), using: &rng) {
        case 0:
            return .null
        case 1:
            return .bool(Bool.random(using: &rng))
        case 2:
            return .number(randomNumber(&rng))
        case 3:
            return .string(randomString(&rng))
        case 4:
            return .array((0..<Int.random(in: 0..<5, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0..<6, using: &rng) {
                object[randomString(&rng)] = randomValue(&rng, depth: depth + 1)
            }
            return .object(object)
        }
    }

    @Test func randomDocumentsSurviveEncodeAndParse() throws {
        var rng = SplitMix64(seed: 0x5EED_0004)
        for _ in 0..<2_000 {
            let value = Self.randomValue(&rng, depth: 0)
            var bytes: [UInt8] = []
            value.encode(into: &bytes)
            let parsed = try JSONValue.parse(bytes)
            #expect(parsed == value, "\(value.jsonString)")
            var again: [UInt8] = []
            parsed.encode(into: &again)
            #expect(again == bytes)
        }
    }

    /// A text said to be written as encoded is, byte for byte, what encoding its value
    /// writes; numbers spelled every which way (lengths around 15 and 17 digits, trailing
    /// zeros, leading zeros after the point, exponents, minus zero) and whitespace.
    @Test func aTextSaidToBeWrittenAsEncodedEncodesToItself() throws {
        var rng = SplitMix64(seed: 0x5EED_0015)
        func digits(_ count: Int) -> String {
            String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) })
        }
        var accepted = 0
        for _ in 0..<40_000 {
            var number = Bool.random(using: &rng) ? "-" : ""
            let integerLength = Int.random(in: 0...17, using: &rng)
            number += integerLength == 0 ? "0" : String(Int.random(in: 1...9, using: &rng)) + digits(integerLength - 1)
            if Bool.random(using: &rng) {
                number += "." + String(repeating: "0", count: Int.random(in: 0...8, using: &rng))
                number += digits(Int.random(in: 1...17, using: &rng))
            }
            if Int.random(in: 0..<8, using: &rng) == 0 {
                number += ["e", "E", "e+", "e-"].randomElement(using: &rng)! + String(Int.random(in: 0...25, using: &rng))
            }
            let texts = [number, "[\(number)]", #"{"a":\#(number),"b":"x"}"#, "[ \(number)]", #"{"a" :\#(number)}"#]
            for text in texts {
                let bytes = Array(text.utf8)
                guard JSONValue.isWrittenAsEncoded(bytes[...]) else { continue }
                accepted += 1
                var again: [UInt8] = []
                try JSONValue.parse(bytes).encode(into: &again)
                #expect(again == bytes, "\(text) was written \(String(decoding: again, as: UTF8.self))")
            }
        }
        #expect(accepted > 20_000)
        let canonical = [#"{"type":"Feature","id":"s1","geometry":{"type":"Point","coordinates":[126.978123,37.5665]},"properties":{"species":"까치","count":3,"ok":true,"gone":null,"n":-0.5,"tiny":0.000001}}"#,
                         "0", "[]", "{}", #""a b""#, "123456789012345"]
        for text in canonical { #expect(JSONValue.isWrittenAsEncoded(Array(text.utf8)[...]), "\(text)") }
        let rewritten = ["-0", "1.0", "1.50", "1e5", "0.0000001", "1234567890123456", "1.2345678901234567",
                         #""a\"b""#, #""\u0041""#, #""\/""#, "[1, 2]", " 1", "1\n", #"{"a":1 }"#]
        for text in rewritten { #expect(!JSONValue.isWrittenAsEncoded(Array(text.utf8)[...]), "\(text)") }
    }

    // MARK: - Compact text read in place

    /// What ``CompactJSON/check(_:maxDepth:)`` says of a text agrees with the parser:
    /// refused whenever the parser refuses it, and otherwise the text it accepts or
    /// writes is what encoding the parsed value writes. Random documents, encoded, then
    /// with whitespace put between tokens, numbers spelt otherwise, or a byte changed.
    @Test func aCheckedTextIsWhatEncodingItsParsedValueWrites() throws {
        var rng = SplitMix64(seed: 0x5EED_0016)
        let respellings: [(String, String)] = [("1", "1.0"), ("0", "-0"), ("5", "5e0"), ("2", "20E-1"), (".5", ".50")]
        let noise: [UInt8] = Array(#"{}[]",:0123456789-.eE+ntfa\"#.utf8) + [0x20, 0x0A, 0x00, 0xC3, 0xA9, 0xFF]
        var forms = (compact: 0, rewritten: 0, refused: 0, refusedByParser: 0)
        for round in 0..<6_000 {
            var text: [UInt8] = []
            Self.randomValue(&rng, depth: 0).encode(into: &text)
            switch round % 4 {
            case 0:
                break
            case 1:  // whitespace after some structural bytes
                var spaced: [UInt8] = []
                var inString = false
                for byte in text {
                    spaced.append(byte)
                    if byte == UInt8(ascii: "\"") { inString.toggle() }
                    if !inString, [UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "{")].contains(byte),
                       Bool.random(using: &rng) {
                        spaced += Array([" ", "\n", "\t ", "\r\n  "].randomElement(using: &rng)!.utf8)
                    }
                }
                text = [0x20] + spaced + [0x0A]
            case 2:  // another spelling of some numbers (or of digits inside strings)
                var string = String(decoding: text, as: UTF8.self)
                let (from, to) = respellings.randomElement(using: &rng)!
                if let range = string.range(of: from) { string.replaceSubrange(range, with: to) }
                text = Array(string.utf8)
            default:  // one byte changed, dropped or added
                let position = Int.random(in: 0...text.count, using: &rng)
                let byte = noise.randomElement(using: &rng)!
                switch Int.random(in: 0..<3, using: &rng) {
                case 0 where position < text.count: text[position] = byte
                case 1 where position < text.count: text.remove(at: position)
                default: text.insert(byte, at: position)
                }
            }
            let maxDepth = Int.random(in: 1...5, using: &rng)
            let form = text.withUnsafeBufferPointer { CompactJSON.check($0, maxDepth: maxDepth) }
            guard let parsed = try? JSONValue.parse(text, maxDepth: maxDepth) else {
                forms.refusedByParser += 1
                #expect(form == .refused, "\(String(decoding: text, as: UTF8.self)) is not JSON, but was read")
                continue
            }
            var encoded: [UInt8] = []
            parsed.encode(into: &encoded)
            switch form {
            case .compact:
                forms.compact += 1
                #expect(encoded == text, "\(String(decoding: text, as: UTF8.self)) was read as compact")
            case let .rewritten(rewritten):
                forms.rewritten += 1
                #expect(encoded == rewritten, "\(String(decoding: text, as: UTF8.self)) was rewritten \(String(decoding: rewritten, as: UTF8.self))")
            case .refused:
                forms.refused += 1
            }
        }
        // Every outcome is reached often.
        #expect(forms.compact > 1_000 && forms.rewritten > 500 && forms.refused > 500 && forms.refusedByParser > 500,
                "\(forms)")
    }

    @Test func aCheckLeavesToTheParserWhatItDoesNotRead() {
        func form(_ text: String, maxDepth: Int = 64) -> CompactJSON.Form {
            Array(text.utf8).withUnsafeBufferPointer { CompactJSON.check($0, maxDepth: maxDepth) }
        }
        func rewritten(_ text: String) -> CompactJSON.Form { .rewritten(Array(text.utf8)) }
        #expect(form(#"{"type":"Feature","properties":{"species":"까치","count":3,"ok":[true,false,null]}}"#) == .compact)
        #expect(form(#"{ "a" : [ 1.50 , -0, 2e3, 0.0000001 ] }"#) == rewritten(#"{"a":[1.5,0,2000,1e-7]}"#))
        #expect(form(#"[[1]]"#, maxDepth: 2) == .compact)
        #expect(form(#"[[1]]"#, maxDepth: 1) == .refused)
        for text in [#""a\"b""#, #""\u0041""#, "\"a\u{1}\"", #"{"a":1,"a":2}"#, #"[{"a":{"b":1,"b":1}}]"#,
                     "01", "-", "1.", "1e", "+1", "1e400", "[1,]", #"{"a":1,}"#, "[1] x", "", " "] {
            #expect(form(text) == .refused, "\(text)")
        }
        let wide = "{" + (0...CompactJSON.maxMembers).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        #expect(form(wide) == .refused)
        let invalidUTF8: [UInt8] = [0x22, 0xC0, 0xAF, 0x22]
        #expect(invalidUTF8.withUnsafeBufferPointer { CompactJSON.check($0, maxDepth: 1) } == .refused)
    }

    // MARK: - supercluster's places fixture

    /// The file is pretty-printed JavaScript output, so with the whitespace between
    /// tokens removed it must equal our compact encoding byte for byte.
    @Test func parsesTheSuperclusterPlacesFixture() throws {
        let path = SuperclusterFixtures.directory + "/places.json"
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let collection = try JSONValue.parse(bytes)
        let features = try #require(collection["features"]?.arrayValue)
        #expect(collection["type"] == "FeatureCollection")
        #expect(features.count == 163)
        #expect(features.first?["properties"]?["name"] == "Niagara Falls")
        #expect(features.first?["geometry"]?["coordinates"]?[0]?.doubleValue == -79.04411780507252)

        var minified: [UInt8] = []
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
            } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t") {
                continue
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            }
            minified.append(byte)
        }
        var encoded: [UInt8] = []
        collection.encode(into: &encoded)
        #expect(encoded == minified)
    }
}
