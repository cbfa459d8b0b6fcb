import CofferEngine
import CofferFormat
import CofferRecords
import Foundation

/// A summary of a database file as SQLite reads it through an open ``Database``: its layout, journal mode,
/// cipher settings and tables (what `coffer info` prints).
///
/// A file the linked SQLCipher 3.4.1 cannot open (SQLCipher 1, 2 or 4, a damaged file) is summarised by
/// CofferRepair's `DecodedFileInfo` instead, read page by page: the same cipher type (`CipherSettings`), but
/// no journal mode, and row counts as the salvage engine finds them.
///
/// ```swift
/// let info = try database.info()
/// print(info.pageSize, info.pageCount, info.tables.map(\.name))
/// ```
public struct DatabaseInfo: Codable, Sendable {
    /// One table and its row count.
    public struct Table: Codable, Sendable, Equatable {
        /// The table name.
        public let name: String
        /// The number of rows.
        public let rows: Int
    }

    /// The database path.
    public let path: String
    /// Page size in bytes.
    public let pageSize: Int
    /// Number of pages.
    public let pageCount: Int
    /// Size of the main file in bytes.
    public let fileSize: Int
    /// The journal mode (`wal`, `delete`…).
    public let journalMode: String
    /// Whether the file is encrypted.
    public let encrypted: Bool
    /// The page cipher when encrypted: CofferFormat's `CipherSettings` named after its profile ("coffer",
    /// "sqlcipher3" or "custom"), its `kdfRounds` 0 for a raw key.
    public let cipher: CipherSettings?
    /// `PRAGMA cipher_version` when encrypted.
    public let sqlcipherVersion: String?
    /// `PRAGMA user_version`.
    public let userVersion: Int
    /// Every table except SQLite's internal ones, by name.
    public let tables: [Table]

}

// The JSON form `coffer info --json` prints: snake_case keys, the cipher spelled out as
// `{"version", "page_size", "kdf_algorithm", "kdf_iter", "hmac", "hmac_algorithm", "algorithm"}` ("hmac" a
// Bool, kept for readers of the first form; "hmac_algorithm" `none`, `sha1` or `sha512`, absent in JSON
// written before it existed, which then reads as the derivation's default).
extension DatabaseInfo {
    enum CodingKeys: String, CodingKey {
        case path
        case pageSize = "page_size"
        case pageCount = "page_count"
        case fileSize = "file_size"
        case journalMode = "journal_mode"
        case encrypted, cipher
        case userVersion = "user_version"
        case tables
    }

    /// The stored form of ``cipher`` and ``sqlcipherVersion``.
    private struct StoredCipher: Codable {
        var version: String
        var pageSize: Int
        var kdfAlgorithm: String
        var kdfIterations: Int
        var usesHMAC: Bool
        var hmacAlgorithm: HMACAlgorithm?
        var algorithm = "aes-256-cbc"

        enum CodingKeys: String, CodingKey {
            case version
            case pageSize = "page_size"
            case kdfAlgorithm = "kdf_algorithm"
            case kdfIterations = "kdf_iter"
            case usesHMAC = "hmac"
            case hmacAlgorithm = "hmac_algorithm"
            case algorithm
        }
    }

    /// Reads the JSON form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        path = try container.decode(String.self, forKey: .path)
        pageSize = try container.decode(Int.self, forKey: .pageSize)
        pageCount = try container.decode(Int.self, forKey: .pageCount)
        fileSize = try container.decode(Int.self, forKey: .fileSize)
        journalMode = try container.decode(String.self, forKey: .journalMode)
        encrypted = try container.decode(Bool.self, forKey: .encrypted)
        userVersion = try container.decode(Int.self, forKey: .userVersion)
        tables = try container.decode([Table].self, forKey: .tables)
        let stored = try container.decodeIfPresent(StoredCipher.self, forKey: .cipher)
        sqlcipherVersion = stored?.version
        cipher = stored.map { stored in
            var settings = CipherOptions.settings(
                kdfName: stored.kdfAlgorithm, rounds: stored.kdfIterations, usesHMAC: stored.usesHMAC,
                pageSize: stored.pageSize)
            if let algorithm = stored.hmacAlgorithm, algorithm != settings.hmacAlgorithm {
                // The IV's 16 bytes, then the code rounded up to whole AES blocks (SQLCipher's reserve).
                settings.hmacAlgorithm = algorithm
                settings.reserveBytes = 16 + (algorithm.length + 15) / 16 * 16
            }
            return settings
        }
    }

    /// Writes the JSON form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(pageSize, forKey: .pageSize)
        try container.encode(pageCount, forKey: .pageCount)
        try container.encode(fileSize, forKey: .fileSize)
        try container.encode(journalMode, forKey: .journalMode)
        try container.encode(encrypted, forKey: .encrypted)
        let stored = cipher.map { cipher in
            StoredCipher(
                version: sqlcipherVersion ?? "?", pageSize: cipher.pageSize ?? pageSize,
                kdfAlgorithm: cipher.kdfName,
                kdfIterations: cipher.kdfRounds, usesHMAC: cipher.hmacAlgorithm != .none,
                hmacAlgorithm: cipher.hmacAlgorithm)
        }
        try container.encodeIfPresent(stored, forKey: .cipher)
        try container.encode(userVersion, forKey: .userVersion)
        try container.encode(tables, forKey: .tables)
    }
}

extension Database {
    /// Reads a ``DatabaseInfo`` summary in one snapshot.
    public func info() throws -> DatabaseInfo {
        let configuration = self.configuration
        let derivation = keyDerivation
        let pageFormat = factory.key?.pageFormat ?? .sqlcipher3
        let path = self.path
        return try read { db in
            let names = try db.fetchAll(
                sql:
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
            ).compactMap { $0["name"] as String? }
            let tables = try names.map { name in
                DatabaseInfo.Table(
                    name: name,
                    rows: try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \(SQLIdentifier.quote(name))") ?? 0)
            }
            var cipher: CipherSettings?
            var version: String?
            if configuration.encryption.isEncrypted {
                // A SQLCipher 4 file (which Coffer on SQLCipher 4 opens as it is) keeps SQLCipher 4's page format.
                cipher =
                    pageFormat == .sqlcipher4
                    ? CipherSettings.sqlcipher4.with(pageSize: nil) : configuration.cipher.settings(derivation: derivation)
                version = try db.fetchValue(String.self, sql: "PRAGMA cipher_version") ?? "?"
            }
            let fileSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)??.intValue ?? 0
            return DatabaseInfo(
                path: path,
                pageSize: try db.pageSize() ?? 0,
                pageCount: try db.fetchValue(Int.self, sql: "PRAGMA page_count") ?? 0,
                fileSize: fileSize,
                journalMode: try db.fetchValue(String.self, sql: "PRAGMA journal_mode") ?? "?",
                encrypted: cipher != nil,
                cipher: cipher,
                sqlcipherVersion: version,
                userVersion: try db.fetchValue(Int.self, sql: "PRAGMA user_version") ?? 0,
                tables: tables)
        }
    }
}

extension Database {
    /// A ``DatabaseInfo`` summary of the file at `path`, which is only ever read: SQLite reads the file
    /// itself opened `immutable` when no `-wal`, `-journal` or `-shm` lies beside it, a private copy of it
    /// and its `-wal`/`-journal` otherwise (see ``verify(path:configuration:depth:)`` for why), and the
    /// summary names `path` and its size.
    ///
    /// ```swift
    /// let info = try Database.info(path: "app.db", configuration: .init(encryption: .passphrase("pw")))
    /// print(info.tables.map(\.name))
    /// ```
    ///
    /// - Throws: ``CofferError/fileNotFound``, ``CofferError/wrongPassphrase``, or the error that stopped
    ///   the read (``CofferError/corrupt`` for a WAL claiming more pages than exist).
    public static func info(path: String, configuration: Configuration) throws -> DatabaseInfo {
        var configuration = configuration
        configuration.readOnly = true
        configuration.readerCount = 0
        configuration.onCorruption = nil
        guard FileManager.default.fileExists(atPath: path) else {
            throw CofferError(code: .fileNotFound, message: "no database at \(path)")
        }
        if let claim = try WALScan.impossibleClaim(databasePath: path) {
            throw CofferError(code: .corrupt, message: "\(path) is damaged: \(claim)")
        }
        let (read, journalMode) = try InputCopy.withView(path) { view, immutable in
            var configuration = configuration
            configuration.opensImmutable = immutable
            let database = try Database(path: view, configuration: configuration)
            defer { try? database.close() }
            let read = try database.info()
            // Opened immutable, SQLite runs no WAL and says `delete` whatever the file is: a WAL-mode file
            // says so in its header.
            let wal = try immutable && headerSaysWAL(path, key: database.factory.key, usesHMAC: configuration.cipher.usesHMAC)
            return (read, wal ? "wal" : read.journalMode)
        }
        return DatabaseInfo(
            path: path, pageSize: read.pageSize, pageCount: read.pageCount, fileSize: BackupFiles.size(of: path),
            journalMode: journalMode, encrypted: read.encrypted, cipher: read.cipher,
            sqlcipherVersion: read.sqlcipherVersion,
            userVersion: read.userVersion, tables: read.tables)
    }

    /// Whether the database header of the file at `path` (decrypted with `key` when it has one) says WAL
    /// mode: its read and write versions, bytes 18 and 19, are 2.
    private static func headerSaysWAL(_ path: String, key: DatabaseKey?, usesHMAC: Bool) throws -> Bool {
        let file = try PageFile(path: path, writable: false)
        guard let key else { return try file.read(count: 19, at: 0).last == 2 }
        let page = try file.read(count: key.pageSize, at: 0)
        let decoder = try key.pageDecoder(path: path, pageSize: key.pageSize, usesHMAC: usesHMAC)
        return decoder.plaintextByte(page, pageNumber: 1, at: 18) == 2
    }
}
