import Coffer
import CofferTestSupport
import Foundation

/// Shared helpers for the backup tests: small encrypted databases and comparable dumps.
enum BackupFixture {
    static let passphrase = "backup test passphrase"

    /// A fast-to-open configuration (few KDF rounds: the tests are about pages, not key stretching).
    static func configuration(synchronous: SynchronousMode = .normal) -> Configuration {
        var configuration = Configuration(
            encryption: .passphrase(passphrase), cipher: CipherOptions(keyDerivation: .pbkdf2SHA1(rounds: 2)))
        configuration.synchronous = synchronous
        configuration.readerCount = 2
        return configuration
    }

    /// `app.db` in `directory`, filled by ``populate(_:rows:bodyBytes:)`` and closed: its path.
    static func populatedFile(in directory: TemporaryDirectory, rows: Int) throws -> String {
        let path = directory.path("app.db")
        let database = try Database(path: path, configuration: configuration())
        try populate(database, rows: rows)
        try database.close()
        return path
    }

    /// Creates `item(id INTEGER PRIMARY KEY, body TEXT, n INTEGER)` with `rows` rows.
    static func populate(_ database: Database, rows: Int, bodyBytes: Int = 200) throws {
        try database.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS item(id INTEGER PRIMARY KEY, body TEXT NOT NULL, n INTEGER NOT NULL)")
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS item_n ON item(n)")
            for index in 0..<rows {
                try db.execute(
                    sql: "INSERT INTO item(body, n) VALUES (?, ?)",
                    arguments: [String(repeating: "x", count: bodyBytes) + "\(index)", index])
            }
        }
    }

    /// Every row of every table, in a canonical order, for equality checks.
    static func dump(_ database: Database) throws -> [String] {
        try database.read { db in
            let tables: [String] = try db.fetchAll(sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .compactMap { $0["name"] }
            var lines: [String] = []
            for table in tables {
                for row in try db.fetchAll(sql: "SELECT * FROM \"\(table)\" ORDER BY rowid") {
                    lines.append("\(table): \(row)")
                }
            }
            return lines
        }
    }

    static func dump(path: String, configuration: Configuration = BackupFixture.configuration()) throws -> [String] {
        let database = try Database(path: path, configuration: configuration)
        defer { try? database.close() }
        return try dump(database)
    }
}
