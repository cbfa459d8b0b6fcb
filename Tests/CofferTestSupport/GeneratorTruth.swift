// GeneratorTruth — one file's ground truth as Tools/corpus/make_app_databases.py writes it (`<file>.json`).

import Foundation

/// The realistic-corpus generator's ground truth for one database file: its rows, the answers its queries
/// must give, its virtual tables, AUTOINCREMENT state and header values.
public struct GeneratorTruth: Decodable, Sendable {
    /// One table's declared columns and rows, in rowid (or primary key) order.
    public struct Table: Decodable, Sendable {
        public var columns: [String]
        public var rows: [[GeneratorValue]]
    }
    /// A query (MATCH, R*Tree box, view) and the rows it answers on the pristine file.
    public struct Query: Decodable, Sendable {
        public var sql: String
        public var rows: [[GeneratorValue]]
    }
    public var name: String
    public var path: String
    public var profile: String
    public var passphrase: String?
    public var tables: [String: Table]
    /// Virtual table name → module.
    public var virtualTables: [String: String]
    /// The FTS4 tables, whose `integrity-check` must pass.
    public var fts4: [String]
    public var queries: [Query]
    public var sequences: [String: Int64]
    public var nextIds: [String: Int64]
    public var userVersion: Int
    public var applicationId: Int

    /// Reads the truth file at `path` (snake_case keys).
    public static func load(_ path: String) throws -> GeneratorTruth {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(GeneratorTruth.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
