import ArgumentParser
import Coffer
import Foundation

/// `coffer info DB`: page size, page count, file size, journal mode, cipher settings, and each table
/// with its row count.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a database's layout, cipher settings and tables with row counts.")

    @Argument(help: "The database file.")
    var database: String

    @OptionGroup var key: KeyOptions

    @OptionGroup var compat: CipherCompatOptions

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func run() throws {
        if compat.needsPageDecoder(key) { return try runDecoded() }
        let info: DatabaseInfo
        do {
            info = try Database.info(path: database, configuration: try key.configuration())
        } catch {
            if CLIFailure.isWrongPassphrase(error), !compat.isExplicit(key) { return try runDecoded() }
            // A file SQLite should not open (a WAL claiming impossible sizes, say) is read page by page.
            if let failure = error as? CofferError, failure.isCorruption { return try runDecoded() }
            throw CLIFailure(error, opening: self.database)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(info), as: UTF8.self))
        } else {
            print(Self.text(for: info))
        }
    }

    /// "off", "SHA1" or "SHA512".
    static func hmacName(_ algorithm: HMACAlgorithm) -> String {
        switch algorithm {
        case .none: return "off"
        case .sha1: return "SHA1"
        case .sha512: return "SHA512"
        }
    }

    static func text(for info: DatabaseInfo) -> String {
        var lines = [
            "file:          \(info.path) (\(info.fileSize) bytes)",
            "pages:         \(info.pageCount) × \(info.pageSize) bytes",
            "journal mode:  \(info.journalMode)",
            "user_version:  \(info.userVersion)",
        ]
        if let cipher = info.cipher {
            lines.append(
                "cipher:        SQLCipher \(info.sqlcipherVersion ?? "?"), aes-256-cbc, \(cipher.kdfName) \(cipher.kdfRounds) iterations, HMAC \(Self.hmacName(cipher.hmacAlgorithm))"
            )
        } else {
            lines.append("cipher:        none (plaintext)")
        }
        lines.append("tables:        \(info.tables.count)")
        let width = info.tables.map(\.name.count).max() ?? 0
        for table in info.tables {
            lines.append("  \(table.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(table.rows) rows")
        }
        return lines.joined(separator: "\n")
    }
}
