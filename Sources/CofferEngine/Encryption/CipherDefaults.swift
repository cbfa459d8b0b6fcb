import Foundation

/// SQLCipher's process-wide defaults (`PRAGMA cipher_default_*`), set for the length of one `ATTACH`.
///
/// `ATTACH … KEY` reads the attached file's schema at once, with a codec made from these defaults: a
/// per-schema PRAGMA after it comes too late for a file whose page size or HMAC is not the defaults'. So an
/// attachment of such a file sets the defaults to the file's format, attaches, and puts them back, under one
/// lock so two attachments never interleave. Coffer's own connections never depend on the defaults: every
/// keyed schema is told its whole format after its key (``LinkedSQLCipher/pageFormatPragmas(schema:format:pageSize:usesHMAC:)``).
/// Another library's SQLCipher connection keyed in this process during those few milliseconds, without
/// setting its format, would start from the file's format instead of SQLCipher's.
enum CipherDefaults {
    private static let lock = NSLock()

    /// Runs `body` (an `ATTACH` on `connection`) with the defaults set to `format` at `pageSize`.
    static func with<T>(
        format: LinkedSQLCipher.PageFormat, pageSize: Int, usesHMAC: Bool, on connection: Connection,
        _ body: () throws -> T
    ) throws -> T {
        let settings = format.settings(pageSize: pageSize, usesHMAC: usesHMAC)
        let names = settings.map { "cipher_default_" + $0.name }
        let values = settings.map(\.value)
        lock.lock()
        defer { lock.unlock() }
        let saved = try names.map { name -> String in
            guard let value = try connection.fetchOne(sql: "PRAGMA \(name)")?[0], case .text(let text) = value else {
                throw CofferError(code: .error, message: "the linked SQLCipher does not answer PRAGMA \(name)")
            }
            // SQLCipher 3.4.1 answers use_hmac as 0/1, which it also takes back.
            return text
        }
        defer {
            for (name, value) in zip(names, saved) { try? connection.execute(sql: "PRAGMA \(name) = \(value)") }
        }
        for (name, value) in zip(names, values) { try connection.execute(sql: "PRAGMA \(name) = \(value)") }
        return try body()
    }
}
