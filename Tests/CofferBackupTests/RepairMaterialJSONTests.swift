import Coffer
import Foundation
import XCTest

/// Repair material holds CofferFormat's `CipherSettings` and `SchemaEntry` but stores the JSON it always
/// stored: material written before the types were shared reads back, and writes back key for key.
final class RepairMaterialJSONTests: XCTestCase {
    /// Format version 1 as Coffer wrote it before `cipher` and `schema` were CofferFormat's types.
    static let stored = """
        {"formatVersion": 1, "createdAt": 785000000, "generationID": 3, "pageSize": 4096, "pageCount": 4,
         "reservedBytes": 48, "schemaVersion": 2, "userVersion": 0, "databaseSalt": "AAECAwQFBgcICQoLDA0ODw==",
         "cipher": {"algorithm": "aes-256-cbc", "kdfAlgorithm": "pbkdf2-hmac-sha512", "kdfIterations": 256000,
                    "hmacAlgorithm": "hmac-sha1", "hmacKeyIterations": 2, "hmacSaltMask": 58, "hmacPageNumber": "le"},
         "schema": [{"type": "table", "name": "item", "tableName": "item", "rootPage": 2,
                     "sql": "CREATE TABLE item(id INTEGER PRIMARY KEY, n INTEGER)"},
                    {"type": "index", "name": "item_n", "tableName": "item", "rootPage": 3,
                     "sql": "CREATE INDEX item_n ON item(n)"}],
         "trees": [{"name": "item", "type": "table", "rootPage": 2, "interiorPages": [],
                    "leafPages": [{"pageNumber": 2, "checksum": "0011223344556677"}]}],
         "unreadablePages": []}
        """

    func testStoredMaterialReadsIntoTheSharedTypesAndWritesBackTheSameKeys() throws {
        let material = try JSONDecoder().decode(RepairMaterial.self, from: Data(Self.stored.utf8))
        let cipher = try XCTUnwrap(material.cipher)
        XCTAssertEqual(cipher.name, "coffer")
        XCTAssertEqual(cipher.kdfRounds, 256_000)
        XCTAssertEqual(cipher.hmacAlgorithm, .sha1)
        XCTAssertEqual(cipher.pageSize, 4096)
        XCTAssertEqual(cipher.reserveBytes, 48)
        XCTAssertEqual(material.schema.map(\.kind), [.table, .index])
        XCTAssertEqual(material.schema.last?.rootPage, 3)

        let written = try JSONSerialization.jsonObject(with: JSONEncoder().encode(material)) as? [String: Any]
        let original = try JSONSerialization.jsonObject(with: Data(Self.stored.utf8)) as? [String: Any]
        XCTAssertEqual(Set(try XCTUnwrap(written).keys), Set(try XCTUnwrap(original).keys))
        XCTAssertEqual(
            written?["cipher"] as? NSDictionary, original?["cipher"] as? NSDictionary, "the cipher is stored spelled out")
        XCTAssertEqual(written?["schema"] as? NSArray, original?["schema"] as? NSArray, "schema rows keep `type`")
        XCTAssertEqual(try JSONDecoder().decode(RepairMaterial.self, from: JSONEncoder().encode(material)), material)
    }

    func testRawKeyMaterialSaysSoAndKeepsItsRounds() throws {
        let rawKey = Self.stored.replacingOccurrences(
            of: "\"pbkdf2-hmac-sha512\", \"kdfIterations\": 256000", with: "\"none (raw key)\", \"kdfIterations\": 0")
        let material = try JSONDecoder().decode(RepairMaterial.self, from: Data(rawKey.utf8))
        XCTAssertEqual(material.cipher?.kdfRounds, 0)
        XCTAssertEqual(material.cipher?.kdfName, "none (raw key)")
        let written = try JSONSerialization.jsonObject(with: JSONEncoder().encode(material)) as? [String: Any]
        let cipher = written?["cipher"] as? [String: Any]
        XCTAssertEqual(cipher?["kdfAlgorithm"] as? String, "none (raw key)")
        XCTAssertEqual(cipher?["kdfIterations"] as? Int, 0)
    }
}
