/// A place's weekly opening hours, read from OpenStreetMap's `opening_hours` syntax (the
/// common subset), in the place's local time.
///
/// Taken: `24/7`; rules separated by `;` (or by `,` or a space before the next weekday
/// selector, as mappers also write them), each an optional weekday selector (`Mo`, `Mo-Fr`,
/// `Sa,Su`, wrapping ranges such as `Su-Tu`) followed by time ranges (`08:00-12:00,13:00-18:00`),
/// `off`/`closed`, or nothing (open all day). A range may end past midnight (`18:00-02:00`,
/// `22:00-26:00`); it then runs into the next day. A later rule replaces the times of the
/// days it names, as in OSM. Public and school holidays (`PH`, `SH`) are not known here, so
/// their rules are not applied: on such a day the regular hours are assumed (the answer
/// says so). Anything else (months, weeks, `sunrise`, comments, `||`) is ``Error/unsupported(_:)``,
/// and the caller treats the place's hours as unknown.
public struct OpeningHours: Sendable, Equatable {
    public enum Error: Swift.Error, Equatable, CustomStringConvertible {
        case unsupported(String)

        public var description: String {
            switch self {
            case let .unsupported(token): "opening_hours: \"\(token.prefix(40))\" is not in the supported subset"
            }
        }
    }

    public static let minutesPerDay = 1_440
    public static let minutesPerWeek = 7 * 1_440

    /// Open intervals per weekday (0 Monday ... 6 Sunday), in minutes from that day's
    /// midnight; an end past 1,440 runs into the next day.
    public private(set) var days: [[Range<Int>]] = Array(repeating: [], count: 7)
    /// Whether the text had public or school holiday rules, which are not applied.
    public private(set) var mentionsHolidays = false
    /// Merged open intervals over three consecutive weeks, in minutes from the first
    /// week's Monday 00:00; queries use the middle week, so that a Sunday night's hours
    /// reach into Monday and a Monday is reached from the Sunday before.
    private var timeline: [Range<Int>] = []

    public init(parsing text: String) throws(Error) {
        let trimmed = text.trimmingCharacters(in: " ")
        guard !trimmed.isEmpty else { throw .unsupported(text) }
        for chunk in trimmed.split(separator: ";") {
            var rule = Rule()
            for word in chunk.split(whereSeparator: { $0 == " " || $0 == "," }) {
                if let weekdays = try Self.weekdays(word) {
                    if rule.hasTimes { apply(rule); rule = Rule() }
                    if weekdays.isEmpty { rule.holiday = true } else { rule.days.formUnion(weekdays) }
                } else if word == "24/7" || word == "open" {
                    rule.intervals.append(0..<Self.minutesPerDay)
                    rule.hasTimes = true
                } else if word == "off" || word == "closed" {
                    rule.off = true
                    rule.hasTimes = true
                } else if let interval = Self.timeRange(word) {
                    rule.intervals.append(interval)
                    rule.hasTimes = true
                } else {
                    throw .unsupported(String(word))
                }
            }
            apply(rule)
        }
        var line: [Range<Int>] = []
        for week in 0..<3 {
            for (day, intervals) in days.enumerated() {
                let base = week * Self.minutesPerWeek + day * Self.minutesPerDay
                line += intervals.map { (base + $0.lowerBound)..<(base + $0.upperBound) }
            }
        }
        line.sort { $0.lowerBound < $1.lowerBound }
        for interval in line {
            if let last = timeline.last, interval.lowerBound <= last.upperBound {
                timeline[timeline.count - 1] = last.lowerBound..<max(last.upperBound, interval.upperBound)
            } else {
                timeline.append(interval)
            }
        }
    }

    private struct Rule {
        var days: Set<Int> = []
        var holiday = false
        var intervals: [Range<Int>] = []
        var off = false
        var hasTimes = false
    }

    /// A rule replaces the hours of the days it names (every day without a selector); a
    /// holiday-only rule is not applied.
    private mutating func apply(_ rule: Rule) {
        if rule.holiday { mentionsHolidays = true }
        if rule.holiday && rule.days.isEmpty { return }
        let intervals = rule.off ? [] : (rule.intervals.isEmpty ? [0..<Self.minutesPerDay] : rule.intervals)
        for day in rule.days.isEmpty ? Set(0..<7) : rule.days { days[day] = intervals }
    }

    private static let names = ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"]

    /// The days of a weekday selector word (`Mo`, `Mo-Fr`, `Su-Tu`), empty for `PH`/`SH`;
    /// `nil` when the word is not one.
    private static func weekdays(_ word: Substring) throws(Error) -> Set<Int>? {
        if word == "PH" || word == "SH" { return [] }
        let ends = word.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(ends.count), let first = names.firstIndex(of: String(ends[0])) else { return nil }
        guard ends.count == 2 else { return [first] }
        guard let last = names.firstIndex(of: String(ends[1])) else { throw .unsupported(String(word)) }
        var days: Set<Int> = [first]
        var day = first
        while day != last {
            day = (day + 1) % 7
            days.insert(day)
        }
        return days
    }

    /// `HH:MM-HH:MM` in minutes from midnight; an end at or before the start (other than a
    /// whole day) runs past midnight. Hours up to 48.
    private static func timeRange(_ word: Substring) -> Range<Int>? {
        let ends = word.split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2, let start = minutes(ends[0]), var end = minutes(ends[1]),
              start < 2 * minutesPerDay else { return nil }
        if end <= start { end += minutesPerDay }
        guard end - start <= minutesPerDay else { return nil }
        return start..<end
    }

    private static func minutes(_ text: Substring) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }),
              let hours = Int(parts[0]), let minutes = Int(parts[1]), hours <= 48, minutes < 60 else { return nil }
        return hours * 60 + minutes
    }

    /// Whether the place is open for the whole of `minutes` minutes from `start`, a
    /// minute of the week (0 is Monday 00:00, local time).
    public func isOpen(from start: Double, for minutes: Double) -> Bool {
        let s = Self.middleWeek(start)
        let e = s + max(0, minutes)
        return timeline.contains { Double($0.lowerBound) <= s && e <= Double($0.upperBound) }
    }

    /// Minutes from `start` (a minute of the week) until the place next opens: 0 when it is
    /// open then; `nil` when it never opens.
    public func minutesUntilOpen(from start: Double) -> Double? {
        minutesUntilOpen(from: start, for: 0)
    }

    /// Minutes from `start` until the place is next open for the whole of `minutes`
    /// minutes (a visit that starts then fits, as ``isOpen(from:for:)`` tells): 0 when one
    /// starting at `start` does; `nil` when none starts within a week. A place open at
    /// `start` that closes before the visit is over is open for such a visit only at a
    /// later opening, long enough.
    public func minutesUntilOpen(from start: Double, for minutes: Double) -> Double? {
        let s = Self.middleWeek(start), length = max(0, minutes)
        for open in timeline {
            let begin = max(Double(open.lowerBound), s)
            // As isOpen(from:for:) tells it: the visit's end at or before the closing.
            guard Double(open.upperBound) > begin, begin + length <= Double(open.upperBound) else { continue }
            let wait = begin - s
            return wait <= Double(Self.minutesPerWeek) ? wait : nil
        }
        return nil
    }

    private static func middleWeek(_ minuteOfWeek: Double) -> Double {
        let week = Double(minutesPerWeek)
        let wrapped = minuteOfWeek.truncatingRemainder(dividingBy: week)
        return (wrapped < 0 ? wrapped + week : wrapped) + week
    }
}

private extension StringProtocol {
    func trimmingCharacters(in character: Character) -> Substring {
        var text = self[...]
        while text.first == character { text = text.dropFirst() }
        while text.last == character { text = text.dropLast() }
        return Substring(text)
    }
}
