import Foundation
import Testing
@testable import GeoClusterEngine

/// Names kept once for the process: the same name is one number wherever it is given,
/// and gives back its text.
@Suite struct SharedNameTests {
    @Test func aNameIsOneNumberAndGivesBackItsText() {
        let run = UUID().uuidString
        let names = ["u1", "", "흰뺨검둥오리 \(run)", "\(run)", "\(run)-0123456789abcdef0123456789"]
        let numbers = names.map { SharedName($0) }
        #expect(Set(numbers).count == names.count)
        for (name, number) in zip(names, numbers) {
            #expect(number.text == name)
            #expect(number.utf8.map(Array.init) == Array(name.utf8))
            #expect(SharedName(name) == number)
            #expect(SharedName.existing(name) == number)
            #expect(number != .none)
        }
        #expect(SharedName(nil as String?) == .none && SharedName.none.text == nil && SharedName.none.utf8 == nil)
        #expect(SharedName.existing("never given \(run)") == nil)
        #expect(SharedName.existing("never given \(run)") == nil, "looking a name up does not add it")
    }

    /// A sighting's species is kept as a number and reads back as the name; records of
    /// one species hold the same number, and the name written to the store is the text.
    @Test func aSpeciesIsKeptAsANumberOfItsName() throws {
        let run = UUID().uuidString
        let name = "노랑부리저어새 \(run)"
        func sighting(_ id: String) throws -> LayerRecord {
            try LayerRecord(json: ["id": .string(id), "lon": 126.9, "lat": 37.5, "species": .string(name), "count": 2,
                                   "observed_at": "2025-11-30T07:00:00+09:00"], kind: .sightings, layer: "test", index: 0)
        }
        let a = try sighting("a"), b = try sighting("b")
        guard case let .sighting(first, _, _) = a.fields, case let .sighting(second, _, _) = b.fields else {
            Issue.record("not sightings")
            return
        }
        #expect(first == second && first.text == name && first == RecordName(name) && "\(first)" == name)
        #expect(first != RecordName("\(name) "))
        let stored = try #require(CheckedFields.decode(CheckedFields.encode(a)[...], text: a.featureText[...], kind: .sightings))
        #expect(stored == a)
    }

    /// Many threads giving the same names at once, each in an order of its own, get the
    /// same number for each name.
    @Test func namesGivenAtOnceGetOneNumberEach() async {
        let run = UUID().uuidString
        let names = (0..<500).map { "observer \($0) of \(run)" }
        let seen = await withTaskGroup(of: [String: SharedName].self) { group in
            for _ in 0..<8 {
                group.addTask { Dictionary(uniqueKeysWithValues: names.shuffled().map { ($0, SharedName($0)) }) }
            }
            var all: [[String: SharedName]] = []
            for await numbers in group { all.append(numbers) }
            return all
        }
        for numbers in seen { #expect(numbers == seen[0]) }
        #expect(Set(seen[0].values).count == names.count)
        #expect(seen[0].allSatisfy { $0.key == $0.value.text })
        #expect(seen[0].allSatisfy { $0.value.utf8.map(Array.init) == Array($0.key.utf8) })
    }
}
