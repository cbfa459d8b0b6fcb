import CSQLCipher

/// A feature of SQLite newer than the 3.15.2 of Debian 12's SQLCipher 3.4.1, which Coffer offers where the
/// linked library has it.
///
/// Coffer builds against SQLCipher 3.4.1 (SQLite 3.15.2) or SQLCipher 4.x (SQLite 3.26 and later). The APIs
/// that need one of these features check ``LinkedSQLite/supports(_:)`` first and throw
/// ``CofferError`` with ``ResultCode/unsupportedByLibrary`` on a library without it, before any SQL runs.
///
/// ```swift
/// if LinkedSQLite.supports(.returning) {
///     let removed = try Message.filter { $0.read == true }.deleteAndFetchAll(db)
/// }
/// ```
public struct SQLiteFeature: Hashable, Sendable, CustomStringConvertible {
    /// What the feature is, for messages: "RETURNING".
    public let name: String
    /// The first SQLite version that has it, as `sqlite3_libversion_number()` counts (3.35.0 = 3035000).
    public let minimumVersion: Int
    /// A compile-time option the library must also have been built with (`sqlite3_compileoption_used`).
    let requiredOption: String?
    /// A compile-time option that removes the feature.
    let omittingOption: String?

    /// `INSERT … ON CONFLICT (…) DO UPDATE`: SQLite 3.24 (SQLCipher 4.0 has 3.26).
    public static let upsert = SQLiteFeature(
        name: "UPSERT (ON CONFLICT … DO UPDATE)", minimumVersion: 3_024_000, requiredOption: nil, omittingOption: nil)
    /// `INSERT`/`UPDATE`/`DELETE … RETURNING`: SQLite 3.35 (SQLCipher 4.5).
    public static let returning = SQLiteFeature(
        name: "RETURNING", minimumVersion: 3_035_000, requiredOption: nil, omittingOption: nil)
    /// The JSON functions built in (`json_extract`, `->>`…): SQLite 3.38 (SQLCipher 4.5.1), unless the library
    /// was built with `SQLITE_OMIT_JSON`.
    public static let json = SQLiteFeature(
        name: "JSON functions", minimumVersion: 3_038_000, requiredOption: nil, omittingOption: "OMIT_JSON")
    /// The FTS5 full-text engine: a library built with `SQLITE_ENABLE_FTS5` (SQLCipher 4's builds are; Debian's
    /// 3.4.1 is not). Coffer's FTS5 tokenizers and `coffer_offsets` need 3.25 (`sqlite3_bind_pointer`, the safe
    /// way to reach the FTS5 API, and `sqlite3_str`).
    public static let fts5 = SQLiteFeature(
        name: "FTS5", minimumVersion: 3_025_000, requiredOption: "ENABLE_FTS5", omittingOption: nil)

    /// `sqlite3_snapshot_get`/`_open`: a library built with `SQLITE_ENABLE_SNAPSHOT` (SQLCipher 4's builds;
    /// not Debian's 3.4.1). ``DatabaseSnapshot/concurrentRead(_:)`` needs it.
    public static let snapshots = SQLiteFeature(
        name: "WAL snapshots (sqlite3_snapshot_open)", minimumVersion: 3_010_000, requiredOption: "ENABLE_SNAPSHOT",
        omittingOption: nil)

    public var description: String { name }
}

/// The SQLite (and SQLCipher) Coffer is linked to, and what it can do.
public enum LinkedSQLite {
    /// SQLite's version, such as "3.15.2" (SQLCipher 3.4.1) or "3.49.2" (SQLCipher 4.9).
    public static var version: String { String(cString: sqlite3_libversion()) }

    /// SQLite's version as a number: 3.15.2 is 3015002.
    public static var versionNumber: Int { Int(sqlite3_libversion_number()) }

    /// True when the linked library has `feature`.
    public static func supports(_ feature: SQLiteFeature) -> Bool {
        guard versionNumber >= feature.minimumVersion else { return false }
        if let option = feature.requiredOption, sqlite3_compileoption_used(option) == 0 { return false }
        if let option = feature.omittingOption, sqlite3_compileoption_used(option) != 0 { return false }
        return true
    }

    /// Throws ``ResultCode/unsupportedByLibrary`` when the linked library lacks `feature`, naming what needed it.
    package static func require(_ feature: SQLiteFeature, for operation: String) throws {
        guard !supports(feature) else { return }
        throw CofferError(
            code: .unsupportedByLibrary, message: unsupportedMessage(feature, for: operation))
    }

    /// "`operation` needs FTS5, which the linked SQLite 3.15.2 lacks (…)".
    private static func unsupportedMessage(_ feature: SQLiteFeature, for operation: String) -> String {
        let first = feature.minimumVersion
        let since = "\(first / 1_000_000).\(first / 1_000 % 1_000)"
        let built = feature.requiredOption.map { ", built with SQLITE_\($0)" } ?? ""
        return "\(operation) needs \(feature.name): SQLite \(since) or later\(built) (SQLCipher 4.x); "
            + "Coffer is linked to SQLite \(version)"
    }

    /// True when a prepare error names a feature the linked library lacks — "no such function:
    /// json_extract", "no such module: fts5": such SQL is reported as ``ResultCode/unsupportedByLibrary``,
    /// with SQLite's message.
    static func isMissingFeature(inError message: String) -> Bool {
        (message.hasPrefix("no such function: json") && !supports(.json))
            || (message == "no such module: fts5" && !supports(.fts5))
    }
}
