import CofferEngine
import CofferRecords

/// A full-text index over text columns of the table `Root`: an FTS4 table whose content is `Root`'s own
/// table (`content=`), kept in step by triggers.
///
/// Declare it by making the `@Table` type ``FullTextSearchable``; ``Connection/upgradeSchema(for:)`` then
/// creates the index and its triggers, and fills it from the rows already there.
///
/// ```swift
/// @Table("message") struct Message: Codable {
///     @Column(primaryKey: true) var id: Int64?
///     var sender: String
///     var body: String
/// }
/// extension Message: FullTextSearchable {
///     static let fullTextIndex = FullTextIndex<Message>(columns.body, columns.sender)
/// }
/// ```
public struct FullTextIndex<Root: TableRecord>: Sendable {
    /// The FTS4 table's name (`<table>_fts` unless given).
    public let name: String
    /// The indexed columns of `Root`, in order: the FTS table's columns have the same names.
    public let columnNames: [String]
    /// How text is split into terms.
    public let tokenizer: FullTextTokenizer
    /// `SELECT docid AS rowid FROM "<name>" WHERE "<name>" MATCH `, rendered once (every `matching`
    /// query starts its row source with it); nil when the name cannot be an identifier, which rendering
    /// the query then reports.
    let docidsHead: String?

    /// An index over `columns` (text columns of `Root`).
    ///
    /// - Parameters:
    ///   - columns: the indexed columns.
    ///   - name: the FTS4 table's name; `<table>_fts` by default.
    ///   - tokenizer: ``FullTextTokenizer/coffer`` (CJK-aware) by default.
    public init(
        _ columns: TableColumn<Root, String>..., name: String? = nil, tokenizer: FullTextTokenizer = .coffer
    ) {
        self.init(columnNames: columns.map(\.name), name: name, tokenizer: tokenizer)
    }

    /// An index over columns given by name (optional text columns, or columns the type spells itself).
    public init(columnNames: [String], name: String? = nil, tokenizer: FullTextTokenizer = .coffer) {
        self.name = name ?? Root.tableName + "_fts"
        self.columnNames = columnNames
        self.tokenizer = tokenizer
        let quoted = try? SQLIdentifier.validated(self.name)
        self.docidsHead = quoted.map { "SELECT docid AS rowid FROM \($0) WHERE \($0) MATCH " }
    }
}

/// A `@Table` type with a full-text index over some of its columns.
///
/// `upgradeSchema(for:)` creates the index; ``FullTextSearchable/matching(_:)`` and ``FullTextSearch`` query it.
public protocol FullTextSearchable: TableRecord {
    /// The index's declaration.
    static var fullTextIndex: FullTextIndex<Self> { get }
}

/// How an index splits text into terms: its FTS4 `tokenize=` argument.
public struct FullTextTokenizer: Sendable, Equatable {
    /// The `tokenize=` value, name then arguments, as SQL text.
    package let declaration: String

    /// Coffer's tokenizer (registered on every connection Coffer opens): Chinese, Japanese and Korean as
    /// overlapping character pairs, so that any run of two or more of their characters is found, and
    /// single characters too; other scripts as SQLite's `unicode61` does (case folding, diacritics
    /// removed). Files using it need Coffer (or its C registration) to be searched or written.
    public static let coffer = FullTextTokenizer(declaration: "coffer")
    /// SQLite's `unicode61`: words split on Unicode separators, case folded, diacritics removed. A run of
    /// CJK characters is a single term.
    public static let unicode61 = FullTextTokenizer(declaration: "unicode61")
    /// SQLite's `porter`: English stemming over the `simple` tokenizer (ASCII only).
    public static let porter = FullTextTokenizer(declaration: "porter")
    /// SQLite's `simple`: ASCII letters and digits, ASCII case folded.
    public static let simple = FullTextTokenizer(declaration: "simple")
}
