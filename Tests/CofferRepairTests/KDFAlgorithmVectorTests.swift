import CofferFormat
import XCTest

/// The one PBKDF2 (`KDFAlgorithm.derive`) against published and independently computed vectors: SHA-1 runs
/// on swift-crypto and SHA-512 on OpenSSL, so each path is checked on its own. The first 20 bytes of the
/// SHA-1 vectors are RFC 6070's; the rest are Python's `hashlib.pbkdf2_hmac('sha1'|'sha512', b'password',
/// b'salt', rounds, 32)`.
final class KDFAlgorithmVectorTests: XCTestCase {
    private func derive(
        _ algorithm: KDFAlgorithm, rounds: Int, password: [UInt8] = Array("password".utf8),
        salt: [UInt8] = Array("salt".utf8), count: Int = 32
    ) throws -> String {
        var output = [UInt8](repeating: 0, count: count)
        try password.withUnsafeBytes {
            try algorithm.derive(password: $0, salt: salt, rounds: rounds, into: &output)
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

    /// Coffer's own SHA-512 loop (`coffer_pbkdf2_hmac_sha512`) at the default's 256,000 rounds, and on the
    /// shapes its code branches on: a passphrase longer than SHA-512's 128-byte block (hashed first, as HMAC
    /// does), one exactly a block long, an empty one with a 200-byte salt, and more than one 64-byte output
    /// block. Expected values: Python's `hashlib.pbkdf2_hmac` (OpenSSL's PKCS5_PBKDF2_HMAC).
    func testSHA512EdgeShapesMatchHashlib() throws {
        XCTAssertEqual(
            try derive(.sha512, rounds: 256_000), "c881e84434887fcad1cd37801abf077eb33abd4c70ed10b64b17643c7ef7405e")
        XCTAssertEqual(
            try derive(.sha512, rounds: 3, password: Array(repeating: UInt8(ascii: "p"), count: 200)),
            "0499d2f52a54272883fc04786c49cbfe54771bb53aa16a2f8d3fdad6a6ef15fa")
        XCTAssertEqual(
            try derive(.sha512, rounds: 3, password: Array(repeating: UInt8(ascii: "p"), count: 128)),
            "ae9967296ba9f3ff05582b4a78e59c1bb1bf135aa82f6959b03fd5e61f8deb71")
        XCTAssertEqual(
            try derive(.sha512, rounds: 5, password: [], salt: (0..<200).map { UInt8($0) }, count: 100),
            "81507df019eca718f05423aa67ce2b706fda0843f2a7b4589c638d0781b504c2204614b4b9b567e07513bd87e8e08bf4"
                + "5593aecc55663340b3932c59c49c8edc093b8755d0cd0a63f06c95275b2c31de314756115364e1357b9cf9cab3f3"
                + "6650866f2cd0")
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
