import CofferFormat
import Foundation

/// A summary of a database file: its layout, journal mode, cipher settings and tables.
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

    /// The cipher in use, if any.
    public struct Cipher: Codable, Sendable {
        /// SQLCipher's version string.
        public let version: String
        /// The cipher page size.
        public let pageSize: Int
        /// How the passphrase became the key: `pbkdf2-hmac-sha512` or `pbkdf2-hmac-sha1`, as found in the
        /// file (see ``Database/keyDerivation``); `none (raw key)` for a raw key.
        public let kdfAlgorithm: String
        /// PBKDF2 iterations of that derivation (0 for a raw key).
        public let kdfIterations: Int
        /// Whether pages carry an HMAC.
        public let usesHMAC: Bool
        /// The cipher name.
        public let algorithm: String
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
    /// Cipher settings when encrypted.
    public let cipher: Cipher?
    /// `PRAGMA user_version`.
    public let userVersion: Int
    /// Every table except SQLite's internal ones, by name.
    public let tables: [Table]

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
}

extension DatabaseInfo.Cipher {
    enum CodingKeys: String, CodingKey {
        case version
        case pageSize = "page_size"
        case kdfAlgorithm = "kdf_algorithm"
        case kdfIterations = "kdf_iter"
        case usesHMAC = "hmac"
        case algorithm
    }
}

extension Database {
    /// Reads a ``DatabaseInfo`` summary in one snapshot.
    public func info() throws -> DatabaseInfo {
        let configuration = self.configuration
        let derivation = keyDerivation
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
            var cipher: DatabaseInfo.Cipher?
            if configuration.encryption.isEncrypted {
                cipher = DatabaseInfo.Cipher(
                    version: try db.fetchValue(String.self, sql: "PRAGMA cipher_version") ?? "?",
                    pageSize: configuration.cipher.pageSize,
                    kdfAlgorithm: derivation?.algorithm.rawValue ?? "none (raw key)",
                    kdfIterations: derivation?.rounds ?? 0,
                    usesHMAC: configuration.cipher.usesHMAC,
                    algorithm: "aes-256-cbc")
            }
            let fileSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)??.intValue ?? 0
            return DatabaseInfo(
                path: path,
                pageSize: try db.fetchValue(Int.self, sql: "PRAGMA page_size") ?? 0,
                pageCount: try db.fetchValue(Int.self, sql: "PRAGMA page_count") ?? 0,
                fileSize: fileSize,
                journalMode: try db.fetchValue(String.self, sql: "PRAGMA journal_mode") ?? "?",
                encrypted: cipher != nil,
                cipher: cipher,
                userVersion: try db.fetchValue(Int.self, sql: "PRAGMA user_version") ?? 0,
                tables: tables)
        }
    }
}

extension Database {
    /// A ``DatabaseInfo`` summary of the file at `path`, which is only ever read: SQLite reads a private
    /// copy of it and its `-wal`/`-journal` (see ``verify(path:configuration:)`` for why), and the summary
    /// names `path` and its size.
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
        let copied = try InputCopy.with(path) { copy in
            let database = try Database(path: copy, configuration: configuration)
            defer { try? database.close() }
            return try database.info()
        }
        return DatabaseInfo(
            path: path, pageSize: copied.pageSize, pageCount: copied.pageCount, fileSize: BackupFiles.size(of: path),
            journalMode: copied.journalMode, encrypted: copied.encrypted, cipher: copied.cipher,
            userVersion: copied.userVersion, tables: copied.tables)
    }
}
