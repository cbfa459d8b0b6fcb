import CofferEngine

/// A Codable type stored as the rows of one table. Declare it with `@Table`; the macro writes the
/// requirements, and you add constraints and indexes with the typed columns.
///
/// ```swift
/// @Table("message")
/// struct Message: Codable {
///     @Column(primaryKey: true) var id: Int64?
///     var conversationID: Int64
///     var body: String
///     @Column(default: 0) var score: Double
///     var createdAt: Date
///
///     static var indexes: [TableIndex<Message>] { [TableIndex(columns.conversationID, columns.createdAt)] }
/// }
///
/// try database.write { db in
///     try db.upgradeSchema(for: [Message.self])
///     var message = Message(id: nil, conversationID: 1, body: "hi", score: 0, createdAt: Date())
///     try message.insert(db)                      // message.id is now set
///     let unread = try Message.filter { $0.conversationID == 1 && $0.score > 0.5 }
///         .order { $0.createdAt.desc }.limit(20).fetchAll(db)
/// }
/// ```
public protocol TableRecord: Codable {
    /// The typed column set (generated).
    associatedtype Columns: Sendable
    /// The typed columns, passed to the closures of `filter`, `order`, `select`… (generated).
    static var columns: Columns { get }
    /// The table name (generated from `@Table("name")`, or the type name).
    static var tableName: String { get }
    /// One definition per stored property, in declaration order (generated).
    static var columnDefinitions: [ColumnDefinition] { get }
    /// Table constraints: composite primary key, UNIQUE over several columns, CHECK, foreign keys.
    static var constraints: [TableConstraint<Self>] { get }
    /// The indexes the table should have; schema upgrade creates these and drops any other.
    static var indexes: [TableIndex<Self>] { get }
    /// True for a `WITHOUT ROWID` table (requires a primary key).
    static var withoutRowID: Bool { get }
    /// Called after an insert with the new rowid (generated for an optional integer primary key).
    mutating func didInsert(rowID: Int64)
    /// Reads a record from the current row of a fetch, its columns in ``columnDefinitions`` order.
    ///
    /// `@Table` generates a reader that assigns each property from its column by position (see
    /// ``StatementRow``) for a struct that leaves `init(from:)` to Codable; the default decodes through
    /// `init(from:)`.
    init(statementRow row: StatementRow) throws
    /// The record's column values, in ``columnDefinitions`` order: what inserts and updates bind.
    ///
    /// `@Table` generates a writer that converts each property in place (see
    /// `DatabaseValue.columnValue(_:)`) for a struct that leaves `encode(to:)` to Codable and
    /// whose stored properties are plain; the default encodes through `encode(to:)`.
    func columnValues() throws -> [DatabaseValue]
    /// Binds the record's columns to the statement `binder` holds, parameter `n` for the `n`th column, and
    /// runs `body` once while they are bound: how inserts and updates write a record.
    ///
    /// `@Table` generates one that binds each property straight from the record (see ``RecordBinder``)
    /// wherever it generates ``columnValues()``; the default binds ``columnValues()``.
    func bindColumns(to binder: RecordBinder, then body: () throws -> Void) throws
}

extension TableRecord {
    /// No table constraints by default.
    public static var constraints: [TableConstraint<Self>] { [] }
    /// No indexes by default.
    public static var indexes: [TableIndex<Self>] { [] }
    /// A rowid table by default.
    public static var withoutRowID: Bool { false }
    /// Does nothing by default.
    public mutating func didInsert(rowID: Int64) {}
    /// Decodes through the type's Codable `init(from:)` by default.
    public init(statementRow row: StatementRow) throws { self = try row.decoder.decode(Self.self) }
    /// Encodes through the type's Codable `encode(to:)` by default.
    public func columnValues() throws -> [DatabaseValue] { try RecordEncoder<Self>().values(of: self) }
    /// Binds ``columnValues()`` by default.
    public func bindColumns(to binder: RecordBinder, then body: () throws -> Void) throws {
        try binder.bind(columnValues(), then: body)
    }
}

/// Makes a Codable struct a table: generates its typed columns (`Columns`, `columns`), its column
/// definitions and table name, and the `TableRecord` conformance.
///
/// ```swift
/// @Table("player") struct Player: Codable {
///     @Column(primaryKey: true) var id: Int64?
///     @Column(unique: true) var email: String
///     var name: String
/// }
/// ```
/// Column names are the property names, or the raw values of a `CodingKeys` enum the type declares
/// (a property its `CodingKeys` leave out is no column). Non-optional properties are `NOT NULL`.
///
/// For a struct with plain stored properties and no `init(from:)` in its body, the macro also generates
/// ``TableRecord/init(statementRow:)``, which fetches use instead of Codable's keyed containers; with no
/// `encode(to:)` in its body, it generates ``TableRecord/columnValues()`` and
/// ``TableRecord/bindColumns(to:then:)``, which inserts and updates use instead of running Codable's
/// encoder. Write a custom `init(from:)` or `encode(to:)` in the type's body,
/// not in an extension, so that the macro sees it and leaves decoding or encoding to it.
@attached(member, names: named(Columns), named(columns), named(tableName), named(columnDefinitions), named(didInsert))
@attached(extension, conformances: TableRecord, names: named(init), named(columnValues), named(bindColumns))
public macro Table(_ name: String? = nil) = #externalMacro(module: "CofferMacros", type: "TableMacro")

/// Declares column constraints on a stored property of a `@Table` type.
///
/// - Parameters:
///   - primaryKey: the column is the primary key. An optional `Int64`/`Int` key is a rowid alias:
///     insert it as nil and SQLite assigns the next id, which `insert` writes back.
///   - unique: the column is `UNIQUE`.
///   - default: the `DEFAULT` value, a literal of the property's type.
///   - compressed: how the column's values are compressed with zstd (see ``ColumnCompression``):
///     `.zstd`, `.dictionary(1)`, or `.dictionaries(by: "type", [1: 1, 2: 2])`. Typed queries read and
///     compare plain values; raw SQL reads them with `coffer_decompress(column)`.
@attached(peer)
public macro Column(
    primaryKey: Bool = false, unique: Bool = false, default: (any Sendable)? = nil, compressed: ColumnCompression? = nil
) =
    #externalMacro(module: "CofferMacros", type: "ColumnMacro")
