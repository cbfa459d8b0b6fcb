import CofferFormat
import XCTest

/// The one PBKDF2 (`KDFAlgorithm.derive`) against published and independently computed vectors: SHA-1 runs
/// on swift-crypto and SHA-512 on OpenSSL, so each path is checked on its own. The first 20 bytes of the
/// SHA-1 vectors are RFC 6070's; the rest are Python's `hashlib.pbkdf2_hmac('sha1'|'sha512', b'password',
/// b'salt', rounds, 32)`.
final class KDFAlgorithmVectorTests: XCTestCase {
    private func derive(_ algorithm: KDFAlgorithm, rounds: Int) throws -> String {
        var output = [UInt8](repeating: 0, count: 32)
        try Array("password".utf8).withUnsafeBytes {
            try algorithm.derive(password: $0, salt: Array("salt".utf8), rounds: rounds, into: &output)
        }
        return output.map { String(format: "%02x", $0) }.joined()
    }

    func testSHA1MatchesRFC6070AndHashlib() throws {
        XCTAssertEqual(try derive(.sha1, rounds: 1), "0c60c80f961f0e71f3a9b524af6012062fe037a6e0f0eb94fe8fc46bdc637164")
        XCTAssertEqual(try derive(.sha1, rounds: 2), "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957cae93136266537a8d7bf4b76")
        XCTAssertEqual(try derive(.sha1, rounds: 4096), "4b007901b765489abead49d926f721d065a429c12e463f6c4cd79401085b03db")
    }

    func testSHA512MatchesHashlib() throws {
        XCTAssertEqual(try derive(.sha512, rounds: 1), "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252")
        XCTAssertEqual(try derive(.sha512, rounds: 2), "e1d9c16aa681708a45f5c7c4e215ceb66e011a2e9f0040713f18aefdb866d53c")
        XCTAssertEqual(
            try derive(.sha512, rounds: 4096), "d197b1b33db0143e018b12f3d1d1479e6cdebdcc97c5c0f87f6902e072f457b5")
    }

    func testZeroRoundsCountAsOne() throws {
        XCTAssertEqual(try derive(.sha1, rounds: 0), try derive(.sha1, rounds: 1))
        XCTAssertEqual(try derive(.sha512, rounds: 0), try derive(.sha512, rounds: 1))
    }

    func testNamesRoundTripAndARawKeyHasNoAlgorithm() {
        for algorithm in [KDFAlgorithm.sha1, .sha512] {
            XCTAssertEqual(KDFAlgorithm(derivationName: algorithm.derivationName), algorithm)
        }
        XCTAssertEqual(CipherSettings.sqlcipher4.kdfName, "pbkdf2-hmac-sha512")
        XCTAssertEqual(CipherSettings.sqlcipher3.kdfName, "pbkdf2-hmac-sha1")
        XCTAssertNil(KDFAlgorithm(derivationName: "none (raw key)"))
        XCTAssertEqual(KDFAlgorithm.sha512.displayName, "PBKDF2-HMAC-SHA512")
    }
}
