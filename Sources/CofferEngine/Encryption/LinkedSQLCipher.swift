import CSQLCipher

/// What the SQLCipher Coffer was built against can do, and the PRAGMAs that make it read and write Coffer's
/// page format.
///
/// Coffer builds against Debian's SQLCipher 3.4.1 (SQLite 3.15.2) by default, or SQLCipher 4
/// (`COFFER_SQLCIPHER_PKGCONFIG=sqlcipher4`, see Tools/test-sqlcipher4.sh). The two differ in their page
/// defaults: SQLCipher 4 authenticates pages with HMAC-SHA512 (80 reserved bytes) and derives the HMAC key with
/// PBKDF2-HMAC-SHA512, where Coffer's files use SQLCipher 3's HMAC-SHA1 (48 reserved bytes) and PBKDF2-HMAC-SHA1.
/// So on SQLCipher 4 every keyed schema is told the format explicitly, after its key and before its first
/// read; on 3.4.1 those PRAGMAs do not exist (and would silently do nothing), so they are not sent.
package enum LinkedSQLCipher {
    /// Whether the linked library is SQLCipher 4 or later, told by its SQLite: SQLCipher 4.0 is SQLite 3.26,
    /// SQLCipher 3.4.1 is SQLite 3.15.2 (SQLCipher 3.4.2, the last 3.x, SQLite 3.20.1).
    static let isVersion4 = sqlite3_libversion_number() >= 3_026_000

    /// The page format of an encrypted file.
    package enum PageFormat: Sendable, Hashable {
        /// SQLCipher 3's, which Coffer writes on both libraries: AES-256-CBC, HMAC-SHA1 (or none) keyed by
        /// PBKDF2-HMAC-SHA1 over the salt, 48 reserved bytes (16 without HMAC).
        case sqlcipher3
        /// SQLCipher 4's defaults: HMAC-SHA512 keyed by PBKDF2-HMAC-SHA512, 80 reserved bytes. Only SQLCipher
        /// 4 reads it; Coffer opens such files there but never creates them.
        case sqlcipher4

        /// The settings that make SQLCipher read this format at `pageSize`, with or without HMAC, each as
        /// the name after `cipher_` (a schema's PRAGMA) or `cipher_default_` (the process's default) and its
        /// value. The algorithms come first (each recomputes the reserve, which the page size then
        /// applies), and only on SQLCipher 4: 3.4.1 has no such PRAGMAs (and would silently ignore them).
        func settings(pageSize: Int, usesHMAC: Bool) -> [(name: String, value: String)] {
            var settings: [(name: String, value: String)] = []
            if LinkedSQLCipher.isVersion4 {
                let sha1 = self == .sqlcipher3
                settings.append(("hmac_algorithm", sha1 ? "HMAC_SHA1" : "HMAC_SHA512"))
                settings.append(("kdf_algorithm", sha1 ? "PBKDF2_HMAC_SHA1" : "PBKDF2_HMAC_SHA512"))
            }
            settings.append(("page_size", String(pageSize)))
            settings.append(("use_hmac", usesHMAC ? "ON" : "OFF"))
            return settings
        }
    }

    /// The PRAGMAs, after the key, that make `schema` (nil: the main database) use `format` at `pageSize`,
    /// with or without HMAC. The key is always raw, so no `kdf_iter`. Every setting is spelled out, none left
    /// to SQLCipher's process-wide defaults, which an attachment of a live migration's source changes for a
    /// moment (see CipherDefaults).
    package static func pageFormatPragmas(schema: String? = nil, format: PageFormat, pageSize: Int, usesHMAC: Bool)
        -> [String]
    {
        let prefix = schema.map { "\($0)." } ?? ""
        return format.settings(pageSize: pageSize, usesHMAC: usesHMAC).map { "PRAGMA \(prefix)cipher_\($0.name) = \($0.value)" }
    }
}

extension Connection {
    /// `PRAGMA page_size` of `schema` (nil: main) as a number: SQLCipher 4 answers it as text on a keyed
    /// schema (its `cipher_page_size`), SQLCipher 3.4.1 and plaintext schemas as an integer.
    package func pageSize(schema: String? = nil) throws -> Int? {
        let prefix = schema.map { "\($0)." } ?? ""
        switch try fetchOne(sql: "PRAGMA \(prefix)page_size")?[0] {
        case .integer(let size)?: return Int(size)
        case .text(let size)?: return Int(size)
        default: return nil
        }
    }
}
