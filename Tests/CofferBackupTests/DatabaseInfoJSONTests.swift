import Coffer
import Foundation
import XCTest

/// `coffer info --json`'s cipher object keeps the HMAC's algorithm, so a SQLCipher 4 file's summary (HMAC
/// SHA-512) reads back as SHA-512, not as the derivation's default; JSON written before `hmac_algorithm`
/// existed still reads.
final class DatabaseInfoJSONTests: XCTestCase {
    private func json(cipher: String) -> Data {
        Data(
            """
            {"path": "app.db", "page_size": 4096, "page_count": 2, "file_size": 8192, "journal_mode": "wal",
             "encrypted": true, "user_version": 0, "tables": [], "cipher": \(cipher)}
            """.utf8)
    }

    func testTheHMACAlgorithmSurvivesARoundTrip() throws {
        let sqlcipher4 = """
            {"version": "4.9.0 community", "page_size": 4096, "kdf_algorithm": "pbkdf2-hmac-sha512",
             "kdf_iter": 256000, "hmac": true, "hmac_algorithm": "sha512", "algorithm": "aes-256-cbc"}
            """
        let info = try JSONDecoder().decode(DatabaseInfo.self, from: json(cipher: sqlcipher4))
        XCTAssertEqual(info.cipher?.hmacAlgorithm, .sha512)
        XCTAssertEqual(info.cipher?.reserveBytes, 80)
        let again = try JSONDecoder().decode(DatabaseInfo.self, from: JSONEncoder().encode(info))
        XCTAssertEqual(again.cipher?.hmacAlgorithm, .sha512)
        let object = try XCTUnwrap(
            JSONSerialization.jsonObject(with: JSONEncoder().encode(info)) as? [String: Any])
        let cipher = try XCTUnwrap(object["cipher"] as? [String: Any])
        XCTAssertEqual(cipher["hmac_algorithm"] as? String, "sha512")
        XCTAssertEqual(cipher["hmac"] as? Bool, true)
    }

    func testJSONWithoutTheAlgorithmStillReads() throws {
        let first = """
            {"version": "3.4.1", "page_size": 4096, "kdf_algorithm": "pbkdf2-hmac-sha1", "kdf_iter": 64000,
             "hmac": true, "algorithm": "aes-256-cbc"}
            """
        let info = try JSONDecoder().decode(DatabaseInfo.self, from: json(cipher: first))
        XCTAssertEqual(info.cipher?.hmacAlgorithm, .sha1)
        XCTAssertEqual(info.cipher?.kdfRounds, 64000)
    }
}
