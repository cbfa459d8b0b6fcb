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

    // Patterns for `catch CofferError.constraint` and friends.
    /// Matches any SQLITE_CONSTRAINT error.
    public static let constraint = ResultCode.constraint
    /// Matches SQLITE_BUSY.
    public static let busy = ResultCode.busy
    /// Matches SQLITE_CORRUPT.
    public static let corrupt = ResultCode.corrupt
    /// Matches SQLITE_NOTADB.
    public static let notADatabase = ResultCode.notADatabase
    /// Matches SQLITE_READONLY (a write attempted in a read).
    public static let readOnly = ResultCode.readOnly
    /// Matches SQLITE_RANGE (wrong number of arguments, bad column index).
    public static let range = ResultCode.range
    /// Matches SQLITE_MISUSE (e.g. more than one statement where one is allowed).
    public static let misuse = ResultCode.misuse
    /// Matches SQLITE_IOERR.
    public static let ioError = ResultCode.ioError
    /// Matches SQLITE_FULL.
    public static let full = ResultCode.full
    /// Matches a wrong passphrase or key at open.
    public static let wrongPassphrase = ResultCode.wrongPassphrase
    /// Matches a failed value conversion.
    public static let conversionFailed = ResultCode.conversionFailed
    /// Matches API misuse (closed database, nested write…).
    public static let apiMisuse = ResultCode.apiMisuse
    /// Matches an invalid configuration.
    public static let invalidConfiguration = ResultCode.invalidConfiguration
    /// Matches a missing file.
    public static let fileNotFound = ResultCode.fileNotFound

    /// Builds an error from a connection's last error.
    static func lastError(of handle: OpaquePointer?, code: Int32, sql: String?) -> CofferError {
        let extended = handle.map { sqlite3_extended_errcode($0) } ?? code
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        // sqlite3_extended_errcode reports the last error of the connection; keep it only when it
        // belongs to the same family as the code the failing call returned.
        let chosen = (extended & 0xff) == (code & 0xff) ? extended : code
        return CofferError(code: ResultCode(rawValue: chosen), message: message, sql: sql)
    }
}
