import Testing
@testable import GeoReachability
import GeoClusterTestSupport

/// OpenStreetMap opening hours: the supported subset, and whether a visit fits in them,
/// against hand-computed cases. Minutes of the week: 0 is Monday 00:00; a day is 1,440.
struct OpeningHoursTests {
    static let monday = 0.0, tuesday = 1_440.0, friday = 4 * 1_440.0, saturday = 5 * 1_440.0, sunday = 6 * 1_440.0

    static func at(_ day: Double, _ hour: Double, _ minute: Double = 0) -> Double { day + hour * 60 + minute }

    @Test func weekdaysAndSeveralRanges() throws {
        let hours = try OpeningHours(parsing: "Mo-Fr 08:00-12:00,13:00-17:30; Sa 10:00-14:00; Su off")
        #expect(hours.isOpen(from: Self.at(Self.monday, 8), for: 60))
        #expect(!hours.isOpen(from: Self.at(Self.monday, 11, 30), for: 60), "closes for lunch at 12:00")
        #expect(hours.isOpen(from: Self.at(Self.friday, 16, 30), for: 60))
        #expect(!hours.isOpen(from: Self.at(Self.friday, 16, 31), for: 60))
        #expect(!hours.isOpen(from: Self.at(Self.sunday, 12), for: 10))
        #expect(hours.minutesUntilOpen(from: Self.at(Self.monday, 12, 15)) == Double(45))
        // Saturday 14:00 to Monday 08:00, over a closed Sunday.
        #expect(hours.minutesUntilOpen(from: Self.at(Self.saturday, 14)) == Double(42 * 60))
        #expect(hours.minutesUntilOpen(from: Self.at(Self.monday, 9)) == Double(0))
    }

    @Test func pastMidnightAndTheDayChange() throws {
        let bar = try OpeningHours(parsing: "Tu-We 17:00-00:00;Th 17:00-01:00;Fr-Sa 17:00-02:00")
        // Saturday night runs into Sunday; Sunday itself is closed.
        #expect(bar.isOpen(from: Self.at(Self.sunday, 1), for: 59))
        #expect(!bar.isOpen(from: Self.at(Self.sunday, 1), for: 61))
        #expect(bar.isOpen(from: Self.at(Self.tuesday, 23), for: 60), "open until midnight")
        #expect(!bar.isOpen(from: Self.at(Self.tuesday, 23, 30), for: 31))
        // Sunday 02:00 to Tuesday 17:00: 22 + 24 + 17 hours.
        #expect(bar.minutesUntilOpen(from: Self.at(Self.sunday, 2)) == Double(63 * 60))
        // Every night to 04:00, across the week's end: Sunday 23:00 into Monday.
        let late = try OpeningHours(parsing: "Mo-Su 12:00-04:00")
        #expect(late.isOpen(from: Self.at(Self.sunday, 23), for: 5 * 60))
        #expect(late.isOpen(from: Self.at(Self.monday, 3), for: 60), "Sunday's hours reach Monday 04:00")
        #expect(!late.isOpen(from: Self.at(Self.monday, 4), for: 1))
        // Hours written past 24:00.
        let club = try OpeningHours(parsing: "Fr 22:00-26:00")
        #expect(club.isOpen(from: Self.at(Self.saturday, 1, 30), for: 30))
        #expect(club.days[4] == [1_320..<1_560])
    }

    /// When a visit next fits: a place open at the arrival that closes before the visit
    /// is over is open for it only at its next opening long enough, not at the arrival.
    @Test func aVisitNextFitsAtAnOpeningLongEnough() throws {
        let restaurant = try OpeningHours(parsing: "Mo-Su 11:00-22:00")
        // Saturday 21:34, an 80-minute visit: open, but it closes at 22:00; Sunday 11:00.
        let arrival = Self.at(Self.saturday, 21, 34)
        #expect(!restaurant.isOpen(from: arrival, for: 80))
        #expect(restaurant.minutesUntilOpen(from: arrival) == 0)
        #expect(restaurant.minutesUntilOpen(from: arrival, for: 80) == Self.at(Self.sunday, 11) - arrival)
        #expect(restaurant.minutesUntilOpen(from: Self.at(Self.saturday, 20), for: 80) == 0, "20:00 to 21:20 fits")
        #expect(restaurant.minutesUntilOpen(from: Self.at(Self.saturday, 9), for: 80) == 120, "fits from 11:00")
        // Past midnight: at 01:00 a 17:00-02:00 bar has an hour left; a 90-minute visit
        // fits at 17:00 that day.
        let bar = try OpeningHours(parsing: "Mo-Su 17:00-02:00")
        #expect(bar.minutesUntilOpen(from: Self.at(Self.tuesday, 1), for: 90) == Double(16 * 60))
        // A short lunch opening is passed over for a long visit; one that never fits is nil.
        let split = try OpeningHours(parsing: "Mo-Fr 11:00-12:00,18:00-23:00")
        #expect(split.minutesUntilOpen(from: Self.at(Self.monday, 10), for: 120) == Double(8 * 60))
        #expect(split.minutesUntilOpen(from: Self.at(Self.monday, 10), for: 301) == nil)
        // Every answer is one that isOpen accepts, and none comes sooner.
        for start in stride(from: 0.0, to: 10_080, by: 37) {
            for length in [0.0, 30, 90, 300] {
                guard let wait = split.minutesUntilOpen(from: start, for: length) else { continue }
                #expect(split.isOpen(from: start + wait, for: length))
                #expect(wait == 0 || !split.isOpen(from: start + wait - 1, for: length))
            }
        }
    }

    @Test func shorthandsAndWhatMappersWrite() throws {
        #expect(try OpeningHours(parsing: "24/7").isOpen(from: Self.at(Self.sunday, 23, 50), for: 600))
        #expect(try OpeningHours(parsing: "closed").minutesUntilOpen(from: 0) == nil)
        #expect(try OpeningHours(parsing: "10:00-20:00").isOpen(from: Self.at(Self.sunday, 10), for: 600))
        // A comma or a space before the next weekday starts a rule; ranges may wrap the week.
        let comma = try OpeningHours(parsing: "Mo-Th 10:30-21:00, Fr 10:30-22:00; Sa 11:00-22:00")
        #expect(comma.isOpen(from: Self.at(Self.friday, 21), for: 60))
        #expect(!comma.isOpen(from: Self.at(Self.monday, 21), for: 1))
        let spaced = try OpeningHours(parsing: "We-Fr 13:00-18:00 Sa 12:00-18:00")
        #expect(spaced.isOpen(from: Self.at(Self.saturday, 12), for: 60))
        let wrapping = try OpeningHours(parsing: "We-Sa 10:00-05:00, Su-Tu 10:00-24:00")
        #expect(wrapping.isOpen(from: Self.at(Self.monday, 10), for: 60))
        #expect(!wrapping.isOpen(from: Self.at(Self.tuesday, 1), for: 1), "Monday closes at midnight")
        // A later rule replaces the days it names.
        let replaced = try OpeningHours(parsing: "Mo-Su 09:00-18:00; Sa 10:00-14:00")
        #expect(!replaced.isOpen(from: Self.at(Self.saturday, 9, 30), for: 10))
        // Holidays are not known: their rules are not applied, and the hours say so.
        let holidays = try OpeningHours(parsing: "Mo-Fr 09:00-17:00; PH off")
        #expect(holidays.mentionsHolidays && holidays.isOpen(from: Self.at(Self.monday, 9), for: 60))
        let sundays = try OpeningHours(parsing: "Mo-Sa 09:00-17:00; Su,PH off")
        #expect(!sundays.isOpen(from: Self.at(Self.sunday, 10), for: 1))
    }

    /// Hours come from records anyone may write: no text may trap, and every parsed
    /// answer is a sane one.
    @Test func noTextTraps() {
        var random = SeededRandom(seed: 20261126)
        let alphabet = Array("MoTuWeThFrSaSuPH0123456789:-,; /offclosed24/7")
        for _ in 0..<20_000 {
            let text = String((0..<Int.random(in: 0...30, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            guard let hours = try? OpeningHours(parsing: text) else { continue }
            let start = Double.random(in: -20_000...20_000, using: &random)
            _ = hours.isOpen(from: start, for: Double.random(in: 0...3_000, using: &random))
            if let wait = hours.minutesUntilOpen(from: start) { #expect(wait >= 0 && wait <= 2 * 10_080, "\(text)") }
        }
    }

    @Test(arguments: ["", "Jan-Mar 10:00-18:00", "Mo-Fr sunrise-sunset", "Mo 10:00-18:00 || \"by appointment\"",
                      "\\", "Mo-Xx 10:00-12:00", "Mo 25:00-26:70", "week 1-53 Mo 10:00-12:00", "Mo 10-18"])
    func outsideTheSubsetIsAnError(_ text: String) {
        #expect(throws: OpeningHours.Error.self) { try OpeningHours(parsing: text) }
    }
}
