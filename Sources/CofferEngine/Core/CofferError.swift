import CSQLCipher

/// The one error type Coffer throws.
///
/// It carries the SQLite (extended) result code or one of Coffer's own codes, a message, and the SQL
/// that failed. Bound values, keys and passphrases are never part of an error.
///
/// ```swift
/// do {
///     let db = try Database(path: path, configuration: .init(encryption: .passphrase("secret")))
/// } catch CofferError.wrongPassphrase {
///     // ask again
/// } catch let error as CofferError where error.code == .busy {
///     // retry later
/// }
/// ```
public struct CofferError: Error, CustomStringConvertible, Sendable {
    /// The result code, extended where SQLite gave one.
    public let code: ResultCode
    /// A human-readable message.
    public let message: String
    /// The SQL that failed, if any (never its bound values).
    public let sql: String?

    /// Creates an error.
    public init(code: ResultCode, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let sql { text += " — while executing `\(sql)`" }
        return text
    }

    /// True when the error means the file is damaged (SQLITE_CORRUPT or SQLITE_NOTADB).
    public var isCorruption: Bool {
        code.primary == .corrupt || code.primary == .notADatabase
    }

    /// Builds an error from a connection's last error.
    static func lastError(of handle: OpaquePointer?, code: Int32, sql: String?) -> CofferError {
        let extended = handle.map { sqlite3_extended_errcode($0) } ?? code
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        // sqlite3_extended_errcode reports the last error of the connection; keep it only when it
        // belongs to the same family as the code the failing call returned.
        let chosen = (extended & 0xff) == (code & 0xff) ? extended : code
        if LinkedSQLite.isMissingFeature(inError: message) {
            // SQL that names a JSON function or FTS5 on a library without them: SQLite's own words, under
            // the code that says why (repair reports quote the message as SQLite gave it).
            return CofferError(code: .unsupportedByLibrary, message: message, sql: sql)
        }
        return CofferError(code: ResultCode(rawValue: chosen), message: message, sql: sql)
    }
}
