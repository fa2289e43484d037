import Testing
@testable import GeoClusterEngine

struct CSVReaderTests {
    /// Reads `text` in chunks of `chunkSize` bytes, so that every state is split across
    /// chunk boundaries somewhere.
    static func rows(_ bytes: [UInt8], chunkSize: Int = 1) throws -> [CSVRow] {
        var reader = CSVReader()
        var rows: [CSVRow] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunkSize)
            try reader.read(bytes[start..<end], into: &rows)
            start = end
        }
        try reader.finish(into: &rows)
        return rows
    }

    static func rows(_ text: String, chunkSize: Int = 1) throws -> [CSVRow] {
        try rows(Array(text.utf8), chunkSize: chunkSize)
    }

    @Test(arguments: [1, 2, 3, 7, 1 << 16])
    func quotingEdgeCases(chunkSize: Int) throws {
        let text = "id,name,note\r\n"
            + "a,\"Seoul, Station\",plain\r\n"
            + "b,\"say \"\"hi\"\"\",\r\n"
            + "c,,\"\"\r\n"
            + "d,\"two\nlines\",x\n"
            + "e,5'10\",y"
        let rows = try Self.rows(text, chunkSize: chunkSize)
        #expect(rows == [
            CSVRow(line: 1, fields: ["id", "name", "note"]),
            CSVRow(line: 2, fields: ["a", "Seoul, Station", "plain"]),
            CSVRow(line: 3, fields: ["b", "say \"hi\"", ""]),
            CSVRow(line: 4, fields: ["c", "", ""]),
            CSVRow(line: 5, fields: ["d", "two\nlines", "x"]),
            CSVRow(line: 7, fields: ["e", "5'10\"", "y"]),
        ])
    }

    @Test func aByteOrderMarkIsDroppedEvenWhenSplit() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("id,name\n1,서울\n".utf8)
        for chunkSize in [1, 2, 4, 100] {
            let rows = try Self.rows(bytes, chunkSize: chunkSize)
            #expect(rows.map(\.fields) == [["id", "name"], ["1", "서울"]])
        }
    }

    @Test func lineBreaksInsideQuotesCountAsLinesAndKeepTheirBytes() throws {
        let rows = try Self.rows("h\r\n\"a\r\nb\"\r\n\"c\rd\"\nlast")
        #expect(rows == [CSVRow(line: 1, fields: ["h"]), CSVRow(line: 2, fields: ["a\r\nb"]),
                         CSVRow(line: 4, fields: ["c\rd"]), CSVRow(line: 6, fields: ["last"])])
    }

    @Test func blankLinesAreSkippedButCounted() throws {
        let rows = try Self.rows("h\n\n1\r\n\r\n2\n\n")
        #expect(rows == [CSVRow(line: 1, fields: ["h"]), CSVRow(line: 3, fields: ["1"]), CSVRow(line: 5, fields: ["2"])])
    }

    @Test func malformedRecordsCarryAProblemAndReadingGoesOn() throws {
        let rows = try Self.rows("h,i\n\"a\"b,c\nok,1\n\"open,2\n")
        #expect(rows.count == 4)
        #expect(rows[1].line == 2)
        #expect(rows[1].problem == "field 1: a closing quote must be followed by a comma or a line break")
        #expect(rows[2] == CSVRow(line: 3, fields: ["ok", "1"]))
        #expect(rows[3].line == 4)
        #expect(rows[3].problem == "a quoted field is not closed at the end of the input")
        let invalid = try Self.rows([UInt8]("h\n".utf8) + [0xFF, 0x41, 0x0A])
        #expect(invalid[1].problem == "field 1 is not valid UTF-8")
    }

    @Test func anOverlongRecordStopsTheReading() throws {
        var reader = CSVReader(sourceName: "big.csv", maxRecordBytes: 10)
        var rows: [CSVRow] = []
        #expect(throws: EngineError.invalidLayerSource(path: "big.csv, line 2",
                                                       reason: "a record is longer than 10 bytes; is a quote left open?")) {
            try reader.read(Array("h\n\"unclosed, and on and on".utf8)[...], into: &rows)
        }
    }
}
