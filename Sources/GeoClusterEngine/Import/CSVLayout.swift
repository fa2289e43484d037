import GeoCluster
import GeoClusterWire

/// How the columns of a CSV file map to the fields of a layer record, resolved against
/// its header row.
///
/// Each record field is read from the column of the same name unless ``ImportOptions/columns``
/// names another one: `id`; `lon` and `lat` (WGS 84 degrees), or `x` and `y` (easting and
/// northing) when the input has a CRS; and the kind's fields (`species`, `count`,
/// `observed_at`; `name`, `category`, `dwell_minutes`; `name`, `lines`). Every other column
/// becomes a free-form property.
///
/// CSV has no types, so cells are converted by field: `count` to an integer, `lon`, `lat`,
/// `x`, `y` and `dwell_minutes` to numbers (a cell that does not parse stays text and
/// fails validation with its value), `lines` is split at `;` with blanks around each
/// line trimmed and empty pieces dropped. Ids stay strings. Free-form properties stay
/// strings, always: guessing would turn postal codes such as "01234" or ids such as "1e5"
/// into other values. An empty cell is an absent value: a missing required field, an
/// absent optional one, or a property left out.
struct CSVLayout {
    enum Conversion {
        case text, integer, number, lines
    }

    struct Column {
        let field: String
        let header: String
        let index: Int
        let conversion: Conversion
    }

    /// Columns read into record fields, in the record's field order.
    let fieldColumns: [Column]
    /// Columns kept as free-form properties: (name, index).
    let propertyColumns: [(name: String, index: Int)]
    let columnCount: Int

    /// The record fields of a kind and their conversions, in record order.
    static func fields(of kind: LayerKind, projected: Bool) -> [(String, Conversion)] {
        var fields: [(String, Conversion)] = [("id", .text)]
        fields += projected ? [("x", .number), ("y", .number)] : [("lon", .number), ("lat", .number)]
        switch kind {
        case .sightings: fields += [("species", .text), ("count", .integer), ("observed_at", .text)]
        case .places: fields += [("name", .text), ("category", .text), ("dwell_minutes", .number)]
        case .stations: fields += [("name", .text), ("lines", .lines)]
        case .points: break
        }
        return fields
    }

    /// Fields a file may lack a column for.
    static let optionalFields: Set<String> = ["dwell_minutes"]

    /// Resolves `columns` (record field to header name, for the names that differ)
    /// against `header`.
    /// - Throws: ``EngineError/invalidLayerSource(path:reason:)`` naming the missing or
    ///   clashing column, since no row could be read without it.
    init(header: CSVRow, kind: LayerKind, projected: Bool, columns: [String: String],
         sourceName: String) throws(EngineError) {
        func failure(_ reason: String) -> EngineError {
            .invalidLayerSource(path: "\(sourceName), line \(header.line) (header)", reason: reason)
        }
        if let problem = header.problem { throw failure(problem) }
        let names = header.fields.map { $0.trimmingSpaces }
        var positions: [String: Int] = [:]
        for (index, name) in names.enumerated() {
            guard !name.isEmpty else { throw failure("column \(index + 1) has no name") }
            guard positions[name] == nil else { throw failure("two columns are named \"\(name)\"") }
            positions[name] = index
        }
        let fields = Self.fields(of: kind, projected: projected)
        for field in columns.keys where !fields.contains(where: { $0.0 == field }) {
            throw failure("a \(kind.rawValue) import\(projected ? " with a CRS" : "") has no field \"\(field)\" to map a column to")
        }
        var fieldColumns: [Column] = []
        var used = Set<Int>()
        for (field, conversion) in fields {
            let header = columns[field] ?? field
            guard let index = positions[header] else {
                if Self.optionalFields.contains(field) && columns[field] == nil { continue }
                let flag = "--\(field.replacingUnderscores)-column"
                throw failure("no column \"\(header)\" for the field \"\(field)\""
                              + (columns[field] == nil ? "; name the column with \(flag)" : ""))
            }
            guard used.insert(index).inserted else {
                throw failure("column \"\(header)\" is mapped to two fields")
            }
            fieldColumns.append(Column(field: field, header: header, index: index, conversion: conversion))
        }
        let kindFields = Set(fields.map(\.0)).subtracting(["id", "lon", "lat", "x", "y"])
        var propertyColumns: [(String, Int)] = []
        for (index, name) in names.enumerated() where !used.contains(index) {
            guard !kindFields.contains(name) else {
                throw failure("column \"\(name)\" has the name of a \(kind.rawValue) field read from another column; rename it")
            }
            propertyColumns.append((name, index))
        }
        self.fieldColumns = fieldColumns
        self.propertyColumns = propertyColumns
        columnCount = names.count
    }

    /// The header of the column a field is read from, when it differs from the field's name.
    func column(forField field: String) -> String? {
        guard let column = fieldColumns.first(where: { $0.field == field }) else { return nil }
        return column.header == field ? nil : column.header
    }

    /// The flat record (see ``LayerRecord``) of a row with ``columnCount`` cells. Position
    /// columns go to `lon` and `lat` whatever their CRS; the importer projects them.
    func flatRecord(from cells: [String]) -> JSONObject {
        var record = JSONObject()
        record.reserveCapacity(fieldColumns.count + 1)
        for column in fieldColumns {
            let cell = cells[column.index]
            guard !cell.isEmpty else { continue }
            let key = column.field == "x" ? "lon" : column.field == "y" ? "lat" : column.field
            record[key] = Self.convert(cell, column.conversion)
        }
        var properties = JSONObject()
        for (name, index) in propertyColumns where !cells[index].isEmpty {
            properties[name] = .string(cells[index])
        }
        if !properties.isEmpty { record["properties"] = .object(properties) }
        return record
    }

    /// A cell as the field's JSON value. Numbers are read strictly, as JSON writes them:
    /// an integer field takes only digits after an optional `-` (`3`, not `3.0`, `1e3` or
    /// `+3`), a number field JSON's number grammar (`-12.5e3`); no spaces around either.
    /// Anything else stays text, which the record's validation then reports with its line.
    static func convert(_ cell: String, _ conversion: Conversion) -> JSONValue {
        switch conversion {
        case .text:
            return .string(cell)
        case .integer:
            let digits = cell.hasPrefix("-") ? cell.utf8.dropFirst() : cell.utf8[...]
            guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let integer = Int(cell) else { return .string(cell) }
            return .number(Double(integer))
        case .number:
            guard cell.utf8.allSatisfy({ "0123456789-.eE+".utf8.contains($0) }),
                  case let .number(number)? = try? JSONValue.parse(cell), number.isFinite else { return .string(cell) }
            return .number(number)
        case .lines:
            let lines = cell.split(separator: ";").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
            return .array(lines.map { .string($0) })
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        guard let start = firstIndex(where: { $0 != " " && $0 != "\t" }),
              let end = lastIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        return String(self[start...end])
    }

    var replacingUnderscores: String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}
