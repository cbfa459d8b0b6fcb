import CSQLCipher

/// A SQLite result code, primary or extended, or one of Coffer's own codes.
///
/// Match errors by code in `catch` clauses:
///
/// ```swift
/// do {
///     try db.write { try $0.execute(sql: "INSERT INTO user(email) VALUES (?)", arguments: [email]) }
/// } catch CofferError.constraint {
///     // a UNIQUE, NOT NULL, CHECK or foreign-key constraint failed
/// }
/// ```
///
/// A primary code pattern (``constraint``) matches every extended code of its family
/// (``constraintUnique``…); an extended pattern matches only itself.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The raw code: SQLite's (extended) result code, or a Coffer code at or above 0x10000.
    public let rawValue: Int32

    /// Creates a result code from its raw value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code: the low 8 bits for SQLite codes, the code itself for Coffer's own.
    public var primary: ResultCode {
        isCofferCode ? self : ResultCode(rawValue: rawValue & 0xff)
    }

    /// True for codes Coffer defines itself (SQLite never uses values this large).
    public var isCofferCode: Bool { rawValue >= 0x10000 }

    public var description: String {
        if let name = Self.cofferNames[rawValue] { return name }
        return "\(String(cString: sqlite3_errstr(rawValue))) (\(rawValue))"
    }

    // MARK: SQLite primary codes
    /// SQLITE_ERROR: a generic SQL error or missing database.
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    /// SQLITE_INTERNAL.
    public static let `internal` = ResultCode(rawValue: SQLITE_INTERNAL)
    /// SQLITE_PERM: access permission denied.
    public static let permission = ResultCode(rawValue: SQLITE_PERM)
    /// SQLITE_ABORT: callback requested an abort.
    public static let abort = ResultCode(rawValue: SQLITE_ABORT)
    /// SQLITE_BUSY: the database file is locked.
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    /// SQLITE_LOCKED: a table in the database is locked.
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    /// SQLITE_NOMEM: out of memory.
    public static let noMemory = ResultCode(rawValue: SQLITE_NOMEM)
    /// SQLITE_READONLY: attempt to write a read-only database.
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    /// SQLITE_INTERRUPT.
    public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
    /// SQLITE_IOERR: a disk I/O error.
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    /// SQLITE_CORRUPT: the database disk image is malformed.
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    /// SQLITE_FULL: the disk is full.
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    /// SQLITE_CANTOPEN: unable to open the database file.
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    /// SQLITE_SCHEMA: the schema changed.
    public static let schema = ResultCode(rawValue: SQLITE_SCHEMA)
    /// SQLITE_TOOBIG: string or blob too big.
    public static let tooBig = ResultCode(rawValue: SQLITE_TOOBIG)
    /// SQLITE_CONSTRAINT: a constraint failed.
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    /// SQLITE_MISMATCH: data type mismatch.
    public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
    /// SQLITE_MISUSE: library used incorrectly.
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    /// SQLITE_RANGE: bind index out of range.
    public static let range = ResultCode(rawValue: SQLITE_RANGE)
    /// SQLITE_NOTADB: file is encrypted (with another key) or is not a database.
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)

    // MARK: SQLite extended codes used in Coffer's own logic
    /// SQLITE_CONSTRAINT_UNIQUE.
    public static let constraintUnique = ResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8))
    /// SQLITE_CONSTRAINT_PRIMARYKEY.
    public static let constraintPrimaryKey = ResultCode(rawValue: SQLITE_CONSTRAINT | (6 << 8))
    /// SQLITE_CONSTRAINT_NOTNULL.
    public static let constraintNotNull = ResultCode(rawValue: SQLITE_CONSTRAINT | (5 << 8))
    /// SQLITE_CONSTRAINT_FOREIGNKEY.
    public static let constraintForeignKey = ResultCode(rawValue: SQLITE_CONSTRAINT | (3 << 8))
    /// SQLITE_CONSTRAINT_CHECK.
    public static let constraintCheck = ResultCode(rawValue: SQLITE_CONSTRAINT | (1 << 8))

    // MARK: Coffer's own codes
    /// The passphrase or key does not decrypt the database (SQLCipher reports SQLITE_NOTADB).
    public static let wrongPassphrase = ResultCode(rawValue: 0x10001)
    /// A value stored in the database cannot be converted to the requested Swift type.
    public static let conversionFailed = ResultCode(rawValue: 0x10002)
    /// The database was closed, or an API was called where it cannot work (e.g. a nested write).
    public static let apiMisuse = ResultCode(rawValue: 0x10003)
    /// A configuration value is invalid (page size, key length…).
    public static let invalidConfiguration = ResultCode(rawValue: 0x10004)
    /// The file does not exist where an existing one was required.
    public static let fileNotFound = ResultCode(rawValue: 0x10005)
    /// A compression dictionary cannot be trained or stored (too few samples, an id taken by another
    /// dictionary, an id out of range).
    public static let compressionFailed = ResultCode(rawValue: 0x10006)
    /// The linked SQLite lacks a feature the call needs (RETURNING, UPSERT, JSON functions, FTS5: see
    /// ``SQLiteFeature``); the message names the feature and the version that has it.
    public static let unsupportedByLibrary = ResultCode(rawValue: 0x10007)

    private static let cofferNames: [Int32: String] = [
        0x10001: "wrong passphrase",
        0x10002: "conversion failed",
        0x10003: "API misuse",
        0x10004: "invalid configuration",
        0x10005: "file not found",
        0x10006: "compression failed",
        0x10007: "unsupported by the linked SQLite",
    ]
}

extension ResultCode {
    /// Matches an error thrown by Coffer against a result code (see ``ResultCode``).
    public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
        guard let error = error as? CofferError else { return false }
        if pattern.isCofferCode || pattern.rawValue > 0xff {
            return error.code == pattern
        }
        return error.code.primary == pattern
    }
}
