import CofferEngine
import CofferFormat
import CofferRecords
import Crypto
import Foundation
import _CryptoExtras

/// Reads and writes ``RepairMaterial`` as two alternating files, `repair-material.0` and
/// `repair-material.1`, in a backup directory: a crash while one is written leaves the other intact.
///
/// File format, version 1 (integers big-endian):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | magic `CFRM` |
/// | 4 | 1 | format version (1) |
/// | 5 | 1 | key derivation: 0 none (plaintext database, payload is clear JSON), 1 HKDF-SHA256 of the raw key, 2 PBKDF2-HMAC-SHA256 of the passphrase |
/// | 6 | 4 | PBKDF2 iterations (0 otherwise) |
/// | 10 | 16 | the material's own salt, in clear |
/// | 26 | 8 | sequence number (the higher intact copy wins; slot = sequence mod 2) |
/// | 34 | 8 | the database's `schema_version` the material describes |
/// | 42 | … | AES-256-GCM sealed box: 12-byte nonce ‖ ciphertext ‖ 16-byte tag, authenticating bytes 0–41 too; the plaintext is the JSON of ``RepairMaterial`` |
///
/// The key comes from the passphrase or raw key itself, not from the database's derived key: that one
/// needs the database's salt, which is exactly what the material must survive losing. HKDF info is
/// `coffer repair material v1`.
struct RepairMaterialStore {
    let directory: URL
    static let magic = Array("CFRM".utf8)
    static let headerSize = 42

    private func slotURL(_ slot: UInt64) -> URL { directory.appendingPathComponent("repair-material.\(slot % 2)") }

    private struct Header {
        let derivation: UInt8
        let iterations: Int
        let salt: [UInt8]
        let sequence: UInt64
        let schemaVersion: UInt64
    }

    private static func parseHeader(_ bytes: [UInt8]) -> Header? {
        guard bytes.count > headerSize, Array(bytes[0..<4]) == magic, bytes[4] == 1 else { return nil }
        func u64(_ offset: Int) -> UInt64 { bytes[offset..<(offset + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
        return Header(
            derivation: bytes[5], iterations: Int(ByteView.u32(bytes, at: 6)), salt: Array(bytes[10..<26]),
            sequence: u64(26), schemaVersion: u64(34))
    }

    private func copies() -> [(header: Header, bytes: [UInt8])] {
        [0, 1].compactMap { slot -> (Header, [UInt8])? in
            guard let data = FileManager.default.contents(atPath: slotURL(UInt64(slot)).path) else { return nil }
            let bytes = Array(data)
            return Self.parseHeader(bytes).map { ($0, bytes) }
        }.sorted { $0.0.sequence > $1.0.sequence }
    }

    /// The schema version recorded by the newest copy (read from the clear header, no key needed).
    var latestSchemaVersion: Int? { copies().first.map { Int($0.header.schemaVersion) } }

    func write(_ material: RepairMaterial, encryption: Encryption, iterations: Int) throws {
        let sequence = (copies().first?.header.sequence ?? 0) + 1
        let salt = DatabaseKey.randomSalt()
        let derivation: UInt8
        switch encryption {
        case .none: derivation = 0
        case .rawKey: derivation = 1
        case .passphrase, .passphraseData: derivation = 2
        }
        var header = Self.magic + [1, derivation]
        header += withUnsafeBytes(of: UInt32(derivation == 2 ? iterations : 0).bigEndian, Array.init)
        header += salt
        header += withUnsafeBytes(of: sequence.bigEndian, Array.init)
        header += withUnsafeBytes(of: UInt64(max(material.schemaVersion, 0)).bigEndian, Array.init)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        let json = try encoder.encode(material)
        var file = Data(header)
        if let key = try Self.key(encryption: encryption, salt: salt, iterations: iterations) {
            let box = try AES.GCM.seal(json, using: key, authenticating: Data(header))
            guard let combined = box.combined else {
                throw CofferError(code: .internal, message: "AES-GCM produced no sealed box")
            }
            file.append(combined)
        } else {
            file.append(json)
        }
        // Written in place over the older slot and fsynced: the newer copy stays intact throughout.
        let url = slotURL(sequence)
        guard FileManager.default.createFile(atPath: url.path, contents: file) else {
            throw CofferError(code: .cantOpen, message: "cannot write \(url.path)")
        }
        try BackupFiles.fsyncFile(url.path)
        try BackupFiles.fsyncFile(directory.path)
    }

    func load(encryption: Encryption) throws -> RepairMaterial {
        let all = copies()
        guard !all.isEmpty else { throw CofferError(code: .fileNotFound, message: "no repair material in \(directory.path)") }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var sawWrongKey = false
        for copy in all {
            let header = Array(copy.bytes[0..<Self.headerSize])
            let payload = Data(copy.bytes[Self.headerSize...])
            do {
                let json: Data
                if let key = try Self.key(encryption: encryption, salt: copy.header.salt, iterations: copy.header.iterations) {
                    guard copy.header.derivation != 0 else { continue }
                    do {
                        json = try AES.GCM.open(AES.GCM.SealedBox(combined: payload), using: key, authenticating: Data(header))
                    } catch {
                        sawWrongKey = true
                        continue
                    }
                } else {
                    guard copy.header.derivation == 0 else { continue }
                    json = payload
                }
                return try decoder.decode(RepairMaterial.self, from: json)
            } catch {
                continue
            }
        }
        if sawWrongKey {
            throw CofferError(
                code: .wrongPassphrase,
                message: "the repair material does not decrypt with this passphrase or key (or is damaged)")
        }
        throw CofferError(code: .corrupt, message: "every copy of the repair material in \(directory.path) is damaged")
    }

    private static func key(encryption: Encryption, salt: [UInt8], iterations: Int) throws -> SymmetricKey? {
        guard let secret = encryption.bytes else { return nil }
        let bytes = secret.withUnsafeBytes { Array($0) }
        switch encryption {
        case .rawKey:
            return HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: bytes), salt: salt, info: Array("coffer repair material v1".utf8),
                outputByteCount: 32)
        default:
            return try KDF.Insecure.PBKDF2.deriveKey(
                from: bytes, salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: max(iterations, 1))
        }
    }
}
