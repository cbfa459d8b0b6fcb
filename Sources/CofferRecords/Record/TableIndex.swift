import CofferEngine

/// An index of `Root`, over one or more of its columns.
///
/// ```swift
/// static var indexes: [TableIndex<Message>] {
///     [TableIndex(columns.conversationID, columns.createdAt),
///      TableIndex(columns.externalID, unique: true)]
/// }
/// ```
/// Its name defaults to `<table>_on_<column>_<column>`.
public struct TableIndex<Root: TableRecord>: Sendable {
    /// The index name.
    public let name: String
    /// The indexed column names, in order.
    public let columnNames: [String]
    /// True for a UNIQUE index.
    public let isUnique: Bool

    /// An index over `columns`, unique or not, named `name` or after its table and columns.
    public init(_ columns: any SQLColumn<Root>..., unique: Bool = false, name: String? = nil) {
        self.columnNames = columns.map(\.name)
        self.isUnique = unique
        self.name = name ?? ([Root.tableName, "on"] + columnNames).joined(separator: "_")
    }

    /// `CREATE [UNIQUE] INDEX "name" ON "table" ("a", "b")`.
    package var createSQL: String {
        get throws {
            "CREATE " + (isUnique ? "UNIQUE " : "") + "INDEX " + (try SQLIdentifier.validated(name)) + " ON "
                + (try SQLIdentifier.validated(Root.tableName)) + " ("
                + (try columnNames.map { try SQLIdentifier.validated($0) }.joined(separator: ", ")) + ")"
        }
    }
}
