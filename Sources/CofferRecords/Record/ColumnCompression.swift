import CofferEngine

/// How a column's values are compressed: declared with `@Column(compressed:)` on a `@Table` record.
///
/// ```swift
/// @Table("message") struct Message: Codable {
///     @Column(primaryKey: true) var id: Int64?
///     var type: Int64
///     @Column(compressed: .dictionaries(by: "type", [1: 1, 2: 2])) var content: String
/// }
/// ```
///
/// Values are compressed with zstd when they are written and read back plain by every typed query
/// (filters and orderings compare plain values, through `coffer_decompress`). A value that does not
/// shrink is stored as it is; each compressed value names the dictionary it needs. See the
/// Compression article.
public enum ColumnCompression: Sendable, Hashable {
    /// zstd without a dictionary: for values of a kilobyte and more.
    case zstd
    /// zstd with the dictionary stored under this id (see `Connection.trainCompressionDictionary(id:from:maximumSize:)`).
    /// Until the database holds it, values are compressed without one.
    case dictionary(Int)
    /// zstd with the dictionary that another column's value picks: the column named `by` holds an
    /// integer (a message's type), `dictionaries` maps its values to dictionary ids, and any other value
    /// uses `otherwise` (0: no dictionary).
    case dictionaries(by: String, [Int64: Int], otherwise: Int = 0)
    /// Compression turned off: values are written plain and still read through `coffer_decompress`, so
    /// rows compressed before stay readable until `Database.recompress(_:batchSize:)` has stored them
    /// plain; then the declaration can go.
    case off

    /// How a store writes its one value column through an anonymous `?` (see ``storedSQL(_:)``), or `?`
    /// for `.dictionaries`, which the stores refuse.
    package var storedParameterSQL: String { storedSQL("?") ?? "?" }

    /// `value` (an SQL expression) as a store with this compression stores it: `coffer_compress(value,
    /// dictionary)`, or `coffer_compress(value, NULL)` for `.off` (plain, a BLOB that looks compressed
    /// escaped); nil for `.dictionaries`, which needs a record's other column.
    package func storedSQL(_ value: String) -> String? {
        switch self {
        case .zstd: return "coffer_compress(\(value), 0)"
        case .dictionary(let id): return "coffer_compress(\(value), \(id))"
        case .off: return "coffer_compress(\(value), NULL)"
        case .dictionaries: return nil
        }
    }

    /// `column` as a store reads it: through `coffer_decompress` when the store declares a compression
    /// (`.off` included: values compressed before still read), as it is otherwise.
    package static func readSQL(_ column: String, decompressing: Bool) -> String {
        decompressing ? "coffer_decompress(\(column))" : column
    }

    /// The SQL expression of the dictionary id a value is compressed with (`NULL` for `.off`: stored
    /// plain); `reference` renders the value of another column of the row (a statement parameter, or the
    /// column itself).
    package func dictionarySQL(reference: (String) throws -> String) throws -> String {
        switch self {
        case .off:
            return "NULL"
        case .zstd:
            return "0"
        case .dictionary(let id):
            return String(id)
        case .dictionaries(let column, let ids, let otherwise):
            guard !ids.isEmpty else { return String(otherwise) }
            let cases = ids.sorted { $0.key < $1.key }.map { "WHEN \($0.key) THEN \($0.value)" }
            return "CASE " + (try reference(column)) + " " + cases.joined(separator: " ") + " ELSE \(otherwise) END"
        }
    }
}

extension ColumnCompression {
    /// The dictionary id `coffer_compress` gets for a row whose picking column holds `picker` (only
    /// `.dictionaries` reads it): what ``dictionarySQL(reference:)`` evaluates to, computed without SQL.
    /// nil for `.off` (stored plain). As in SQL's `CASE`, an integer or an integral real matches a key,
    /// anything else (text, NULL) takes `otherwise`.
    package func dictionaryID(picker: DatabaseValue?) -> UInt32? {
        switch self {
        case .off:
            return nil
        case .zstd:
            return 0
        case .dictionary(let id):
            return CompressionRequest.dictionaryID(requested: Int64(id))
        case .dictionaries(_, let ids, let otherwise):
            var key: Int64?
            switch picker {
            case .integer(let value): key = value
            case .real(let value):
                if value.rounded() == value, let exact = Int64(exactly: value) { key = exact }
            default: break
            }
            return CompressionRequest.dictionaryID(requested: Int64(key.flatMap { ids[$0] } ?? otherwise))
        }
    }
}

extension SQLFragment {
    /// `column` read through `coffer_decompress`: the plain value of a compressed column.
    package static func decompressed(_ column: SQLFragment) -> SQLFragment {
        SQLFragment(raw: "coffer_decompress(") + column + SQLFragment(raw: ")")
    }
}

extension ColumnDefinition {
    /// The column as a record fetch selects it: plain, or through `coffer_column` when compressed (the
    /// plain value, as `coffer_decompress` returns it, except while `fetchAll` reads ahead on a second
    /// thread and decodes the stored value itself).
    package func selection(table: String? = nil) -> SQLFragment {
        let part: SQLFragment.Part = table.map { .column(table: $0, name: name) } ?? .identifier(name)
        let column = SQLFragment([part])
        return compression == nil ? column : SQLFragment(raw: "coffer_column(") + column + SQLFragment(raw: ")")
    }
}

extension TableRecord {
    /// True when a column of the type is compressed.
    static var hasCompressedColumns: Bool { columnDefinitions.contains { $0.compression != nil } }

    /// The value parameter `n` writes into column `column` (the record's `n`th column): `?n`, or
    /// `coffer_compress(?n, dictionary)` for a compressed column, whose dictionary may depend on another
    /// column's parameter (NULL for `.off`, which escapes a BLOB that looks compressed).
    static func writtenValueSQL(_ column: ColumnDefinition, parameter: Int) throws -> String {
        guard let compression = column.compression else { return "?\(parameter)" }
        let dictionary = try compression.dictionarySQL { name in
            guard let index = columnDefinitions.firstIndex(where: { $0.name == name }) else {
                throw CofferError(
                    code: .apiMisuse,
                    message: "\(tableName).\(column.name) picks its dictionary by a column \(name) it does not have")
            }
            return "?\(index + 1)"
        }
        return "coffer_compress(?\(parameter), \(dictionary))"
    }

    /// `value` compressed for `columnName` when that column is compressed (an UPDATE's assignment); the
    /// dictionary a column picks by another column reads that column's current value.
    static func compressing(_ value: SQLFragment, forColumn columnName: String) -> SQLFragment {
        guard let column = columnDefinitions.first(where: { $0.name == columnName }), let compression = column.compression
        else { return value }
        do {
            let dictionary = try compression.dictionarySQL { name in
                guard columnDefinitions.contains(where: { $0.name == name }) else {
                    throw CofferError(
                        code: .apiMisuse,
                        message: "\(tableName).\(column.name) picks its dictionary by a column \(name) it does not have")
                }
                return try SQLIdentifier.validated(name)
            }
            return SQLFragment(raw: "coffer_compress(") + value + SQLFragment(raw: ", \(dictionary))")
        } catch let error as CofferError {
            return SQLFragment([.invalid(error)])
        } catch {
            return SQLFragment([.invalid(CofferError(code: .apiMisuse, message: "\(error)"))])
        }
    }
}
