import CofferFormat

extension DatabaseKey {
    /// Coffer's page format (SQLCipher 3's): HMAC-SHA1 with reserve 48, or — `cipher_use_hmac = OFF` — the
    /// 16-byte IV alone, where nothing can be authenticated.
    package static func pageSettings(usesHMAC: Bool) -> CipherSettings {
        var settings = CipherSettings.sqlcipher3
        if !usesHMAC {
            settings.hmacAlgorithm = .none
            settings.reserveBytes = CipherSettings.defaultReserve(for: .none)
        }
        return settings
    }

    /// The page codec for Coffer's files under the raw page key `key`: the HMAC key is
    /// PBKDF2-HMAC-SHA1(key, `salt` XOR 0x3a, 2 rounds).
    package static func pageDecoder(key: SecureBytes, salt: [UInt8], pageSize: Int, usesHMAC: Bool) throws -> PageDecoder {
        let settings = pageSettings(usesHMAC: usesHMAC)
        let keys = try DerivedKeys(rawKey: key, salt: salt, settings: settings)
        return PageDecoder(settings: settings, keys: keys, pageSize: pageSize)
    }

    /// The page codec for a database file: the salt comes from `salt` when known, else the file's first bytes.
    package func pageDecoder(path: String, pageSize: Int, usesHMAC: Bool) throws -> PageDecoder {
        let salt = try self.salt ?? DatabaseKey.readSalt(path: path)
        guard let salt else { throw CofferError(code: .fileNotFound, message: "no database at \(path)") }
        return try Self.pageDecoder(key: key, salt: salt, pageSize: pageSize, usesHMAC: usesHMAC)
    }
}
