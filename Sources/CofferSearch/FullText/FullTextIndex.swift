import CofferEngine
import CofferRecords

/// A full-text index over text columns of the table `Root`: an FTS4 (or FTS5) table whose content is
/// `Root`'s own table (`content=`), kept in step by triggers.
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
///
/// FTS4 is the default on every library; ``FullTextEngine/fts5`` makes it an FTS5 table where the linked
/// SQLite has FTS5 (SQLCipher 4), with the same patterns, ranking and highlights.
public struct FullTextIndex<Root: TableRecord>: Sendable {
    /// The full-text table's name (`<table>_fts` unless given).
    public let name: String
    /// The indexed columns of `Root`, in order: the FTS table's columns have the same names.
    public let columnNames: [String]
    /// How text is split into terms.
    public let tokenizer: FullTextTokenizer
    /// The SQLite module the index is a table of.
    public let engine: FullTextEngine
    /// `SELECT docid AS rowid FROM "<name>" WHERE "<name>" MATCH `, rendered once (every `matching`
    /// query starts its row source with it); nil when the name cannot be an identifier, which rendering
    /// the query then reports.
    let docidsHead: String?

    /// An index over `columns` (text columns of `Root`).
    ///
    /// - Parameters:
    ///   - columns: the indexed columns.
    ///   - name: the full-text table's name; `<table>_fts` by default.
    ///   - tokenizer: ``FullTextTokenizer/coffer`` (CJK-aware) by default.
    ///   - engine: ``FullTextEngine/fts4`` by default (every library has it).
    public init(
        _ columns: TableColumn<Root, String>..., name: String? = nil, tokenizer: FullTextTokenizer = .coffer,
        engine: FullTextEngine = .fts4
    ) {
        self.init(columnNames: columns.map(\.name), name: name, tokenizer: tokenizer, engine: engine)
    }

    /// An index over columns given by name (optional text columns, or columns the type spells itself).
    public init(
        columnNames: [String], name: String? = nil, tokenizer: FullTextTokenizer = .coffer,
        engine: FullTextEngine = .fts4
    ) {
        self.name = name ?? Root.tableName + "_fts"
        self.columnNames = columnNames
        self.tokenizer = tokenizer
        self.engine = engine
        let quoted = try? SQLIdentifier.validated(self.name)
        let rowid = engine.rowidColumn
        self.docidsHead = quoted.map { "SELECT \(rowid) AS rowid FROM \($0) WHERE \($0) MATCH " }
    }
}

/// A `@Table` type with a full-text index over some of its columns.
///
/// `upgradeSchema(for:)` creates the index; ``FullTextSearchable/matching(_:)`` and ``FullTextSearch`` query it.
public protocol FullTextSearchable: TableRecord {
    /// The index's declaration.
    static var fullTextIndex: FullTextIndex<Self> { get }
}

/// The SQLite module a ``FullTextIndex`` is a table of.
///
/// Both find the same rows for the same ``FullTextPattern`` with Coffer's tokenizers, rank by BM25 (k1 = 1.2,
/// b = 0.75) and give the same highlights. FTS4 is in every SQLCipher, Debian 12's 3.4.1 included, so an
/// FTS4 index moves with its file between libraries; an FTS5 table needs a SQLite with FTS5 (SQLCipher 4's
/// builds) to be read or written at all, and in exchange it merges its segments
/// itself as it is written (`automerge`), and hand-written SQL gets FTS5's syntax and functions.
public enum FullTextEngine: String, Sendable, Equatable {
    /// `CREATE VIRTUAL TABLE … USING fts4(…)`: every library.
    case fts4
    /// `CREATE VIRTUAL TABLE … USING fts5(…)`: SQLite 3.25 or later built with FTS5 (SQLCipher 4.x).
    /// ``Connection/upgradeSchema(for:)`` throws ``ResultCode/unsupportedByLibrary`` on a library without it.
    case fts5

    /// The column holding an index row's rowid: FTS4's `docid`, FTS5's `rowid`.
    var rowidColumn: String { self == .fts4 ? "docid" : "rowid" }
}

/// How an index splits text into terms: its `tokenize=` argument.
public struct FullTextTokenizer: Sendable, Equatable {
    /// The `tokenize=` value, name then arguments, as SQL text.
    package let declaration: String

    /// The tokenizer's FTS5 name and arguments: `simple` is FTS5's `ascii` (ASCII letters and digits
    /// folded, every other character part of a word), and FTS5's `porter` stems over `unicode61`.
    var fts5Declaration: String { declaration == "simple" ? "ascii" : declaration }

    /// Coffer's tokenizer (registered on every connection Coffer opens): Chinese, Japanese and Korean as
    /// overlapping character pairs, so that any run of two or more of their characters is found, and
    /// single characters too; other scripts as SQLite's `unicode61` does (case folding, diacritics
    /// removed). Files using it need Coffer (or its C registration) to be searched or written.
    public static let coffer = FullTextTokenizer(declaration: "coffer")
    /// SQLite's `unicode61`: words split on Unicode separators, case folded, diacritics removed. A run of
    /// CJK characters is a single term.
    public static let unicode61 = FullTextTokenizer(declaration: "unicode61")
    /// SQLite's `porter`: English stemming over the `simple` tokenizer (ASCII only; FTS5's stems over `unicode61`).
    public static let porter = FullTextTokenizer(declaration: "porter")
    /// SQLite's `simple`: ASCII letters and digits, ASCII case folded (FTS5's `ascii`).
    public static let simple = FullTextTokenizer(declaration: "simple")
}
