import CofferEngine
import CofferFormat
import CofferRecords
import Foundation

// RepairMaterial's JSON (format version 1). The cipher is held as CofferFormat's `CipherSettings` and stored
// spelled out as it always was, so material written by any Coffer version reads back:
// `{"algorithm": "aes-256-cbc", "kdfAlgorithm": "pbkdf2-hmac-sha512" | "pbkdf2-hmac-sha1" | "none (raw key)",
//   "kdfIterations": N, "hmacAlgorithm": "hmac-sha1" | "none", "hmacKeyIterations": 2, "hmacSaltMask": 58,
//   "hmacPageNumber": "le"}`.

extension RepairMaterial {
    enum CodingKeys: String, CodingKey {
        case formatVersion, createdAt, generationID, pageSize, pageCount, reservedBytes, schemaVersion, userVersion
        case databaseSalt, cipher, schema, trees, unreadablePages
    }

    /// The stored form of ``cipher``.
    private struct StoredCipher: Codable {
        var algorithm = "aes-256-cbc"
        var kdfAlgorithm: String
        var kdfIterations: Int
        var hmacAlgorithm: String
        var hmacKeyIterations = 2
        var hmacSaltMask = 0x3a
        var hmacPageNumber = "le"

        init(_ settings: CipherSettings) {
            kdfAlgorithm = settings.kdfName
            kdfIterations = settings.kdfRounds
            switch settings.hmacAlgorithm {
            case .none: hmacAlgorithm = "none"
            case .sha1: hmacAlgorithm = "hmac-sha1"
            case .sha512: hmacAlgorithm = "hmac-sha512"
            }
        }

        func settings(pageSize: Int) -> CipherSettings {
            CipherOptions.settings(
                kdfName: kdfAlgorithm, rounds: kdfIterations, usesHMAC: hmacAlgorithm != "none", pageSize: pageSize)
        }
    }

    /// Reads material in the stored JSON form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        formatVersion = try container.decode(Int.self, forKey: .formatVersion)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        generationID = try container.decode(Int.self, forKey: .generationID)
        pageSize = try container.decode(Int.self, forKey: .pageSize)
        pageCount = try container.decode(Int.self, forKey: .pageCount)
        reservedBytes = try container.decode(Int.self, forKey: .reservedBytes)
        schemaVersion = try container.decode(Int.self, forKey: .schemaVersion)
        userVersion = try container.decode(Int.self, forKey: .userVersion)
        databaseSalt = try container.decodeIfPresent(Data.self, forKey: .databaseSalt)
        cipher = try container.decodeIfPresent(StoredCipher.self, forKey: .cipher)?
            .settings(pageSize: pageSize)
        schema = try container.decode([SchemaEntry].self, forKey: .schema)
        trees = try container.decode([Tree].self, forKey: .trees)
        unreadablePages = try container.decode([Int].self, forKey: .unreadablePages)
    }

    /// Writes the stored JSON form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(generationID, forKey: .generationID)
        try container.encode(pageSize, forKey: .pageSize)
        try container.encode(pageCount, forKey: .pageCount)
        try container.encode(reservedBytes, forKey: .reservedBytes)
        try container.encode(schemaVersion, forKey: .schemaVersion)
        try container.encode(userVersion, forKey: .userVersion)
        try container.encodeIfPresent(databaseSalt, forKey: .databaseSalt)
        try container.encodeIfPresent(cipher.map(StoredCipher.init), forKey: .cipher)
        try container.encode(schema, forKey: .schema)
        try container.encode(trees, forKey: .trees)
        try container.encode(unreadablePages, forKey: .unreadablePages)
    }
}
