import ArgumentParser
import Coffer
import CofferRepair
import Foundation

extension KDFAlgorithm: ExpressibleByArgument {}
extension HMACAlgorithm: ExpressibleByArgument {}

/// The options that say how an input file was encrypted, for files Coffer did not write: a SQLCipher
/// generation (`--cipher-compat 1|2|3|4`) and/or individual settings, plus a raw key.
///
/// With none of them (and no `--page-size`/`--kdf-iter`), the profile is detected: each generation's
/// settings are tried until page 1's HMAC verifies. Individual settings override the generation's
/// (`--cipher-compat 4 --kdf-iter 64000`); given without a generation they start from SQLCipher 4's when
/// `--kdf-algorithm sha512`, else SQLCipher 3's. The reserve follows the HMAC (IV + HMAC, rounded up to 16)
/// unless `--reserve` says otherwise.
struct CipherCompatOptions: ParsableArguments {
    @Option(
        name: .customLong("cipher-compat"), help: "The SQLCipher generation that wrote the file: 1, 2, 3 or 4 (default: detect).")
    var compat: Int?

    @Option(name: .customLong("kdf-algorithm"), help: "PBKDF2 hash: sha1 or sha512.")
    var kdfAlgorithm: KDFAlgorithm?

    @Option(name: .customLong("hmac-algorithm"), help: "Per-page HMAC: none, sha1 or sha512.")
    var hmacAlgorithm: HMACAlgorithm?

    @Option(name: .customLong("reserve"), help: "Reserved bytes at the end of each page (default: from the HMAC).")
    var reserve: Int?

    @Option(
        name: .customLong("raw-key-file"),
        help: "Read a raw 256-bit key (64 hex digits, or x'…') from this file instead of a passphrase.")
    var rawKeyFile: String?

    @Flag(
        name: .customLong("page-decoder"),
        help: "Read through Coffer's page decoder even when the linked SQLCipher could (info, verify).")
    var forcePageDecoder = false

    func validate() throws {
        if let compat, !(1...4).contains(compat) { throw ValidationError("--cipher-compat must be 1, 2, 3 or 4") }
        if let reserve, !(0...255).contains(reserve) || reserve % 16 != 0 {
            throw ValidationError("--reserve must be a multiple of 16 from 0 to 240")
        }
        if let reserve, let hmacAlgorithm, reserve < 16 + hmacAlgorithm.length {
            throw ValidationError("--reserve \(reserve) cannot hold the IV and a \(hmacAlgorithm.rawValue) HMAC")
        }
    }

    /// Whether any setting was given (detection is skipped then).
    func isExplicit(_ key: KeyOptions) -> Bool {
        compat != nil || kdfAlgorithm != nil || hmacAlgorithm != nil || reserve != nil || key.pageSize != nil
            || key.kdfIterationsOption != nil
    }

    /// Whether the options name a format only the page decoder reads (anything but SQLCipher 3 as the linked
    /// library reads it: SHA-1 KDF, SHA-1 HMAC, reserve 48), or a raw key given as a file.
    func needsPageDecoder(_ key: KeyOptions) -> Bool {
        if forcePageDecoder { return true }
        guard let settings = explicitSettings(key) else { return rawKeyFile != nil }
        return rawKeyFile != nil || settings.kdfAlgorithm != .sha1 || settings.hmacAlgorithm != .sha1
            || settings.reserveBytes != 48
    }

    /// The settings the options spell out, or nil when the profile is to be detected.
    func explicitSettings(_ key: KeyOptions) -> CipherSettings? {
        guard isExplicit(key) else { return nil }
        var settings: CipherSettings
        if let compat, let profile = CipherSettings.compatibility(compat) {
            settings = profile
        } else {
            settings = kdfAlgorithm == .sha512 ? CipherSettings.sqlcipher4.with(pageSize: nil) : .sqlcipher3
        }
        let base = settings
        if let kdfAlgorithm { settings.kdfAlgorithm = kdfAlgorithm }
        if let rounds = key.kdfIterationsOption { settings.kdfRounds = rounds }
        if let hmacAlgorithm {
            settings.hmacAlgorithm = hmacAlgorithm
            settings.reserveBytes = CipherSettings.defaultReserve(for: hmacAlgorithm)
        }
        if let reserve { settings.reserveBytes = reserve }
        settings.pageSize = key.pageSize
        if settings.kdfAlgorithm != base.kdfAlgorithm || settings.kdfRounds != base.kdfRounds
            || settings.hmacAlgorithm != base.hmacAlgorithm || settings.reserveBytes != base.reserveBytes
        {
            settings.name = "custom"
        }
        return settings
    }

    /// Reads 64 hex digits (optionally as the SQLCipher keyspec `x'…'`) from `path`.
    static func readRawKey(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read raw key file \(path)")
        }
        var text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.lowercased().hasPrefix("x'"), text.hasSuffix("'") { text = String(text.dropFirst(2).dropLast()) }
        let digits = Array(text.utf8)
        guard digits.count == 64 else { throw ValidationError("a raw key is 64 hex digits (32 bytes)") }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 64, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<(index + 2)], as: UTF8.self), radix: 16) else {
                throw ValidationError("a raw key is 64 hex digits (32 bytes)")
            }
            bytes.append(byte)
        }
        return bytes
    }

    /// Opens `path` for the page decoder: with the explicit settings, or detecting the profile.
    /// Key problems become the CLI's exit statuses (3 for a wrong key).
    /// `salt` replaces the file's own (damaged) salt when it is known from a backup's repair material.
    func openFile(_ path: String, key: KeyOptions, salt: [UInt8]? = nil) throws -> DatabaseFile {
        let material = try inputEncryption(key)
        let settings = explicitSettings(key)
        do throws(DatabaseFileError) {
            guard material.isEncrypted else { return try DatabaseFile(path: path, key: .none) }
            // A destroyed page 1 or header: the salt of page 1's newest WAL frame is tried too.
            return try DatabaseFile.withWALSaltFallback(path: path, salt: salt) { salt throws(DatabaseFileError) in
                if let settings {
                    return try DatabaseFile(path: path, key: material, settings: settings, salt: salt)
                }
                return try ProfileDetection.open(path: path, key: material, salt: salt)
            }
        } catch {
            throw Self.failure(error, path: path, detected: settings == nil)
        }
    }

    /// The CLI failure for a ``DatabaseFileError``.
    static func failure(_ error: DatabaseFileError, path: String, detected: Bool) -> CLIFailure {
        let tried = detected ? "Coffer's default and SQLCipher 1, 2, 3 and 4 settings tried" : "with the given cipher settings"
        switch error {
        case .wrongKey:
            return CLIFailure(
                status: .wrongPassphrase,
                message: "wrong passphrase: no page of \(path) authenticates with this key at any page size (\(tried))")
        case .saltDamagedOrWrongKey:
            return CLIFailure(
                status: .failure,
                message:
                    "no page of \(path) authenticates, and its salt (the first 16 bytes, which every page key depends on) looks damaged: either the salt is destroyed or the passphrase is wrong (\(tried))"
            )
        case .keyRequired:
            return CLIFailure(
                status: .usage,
                message:
                    "\(path) is not a plaintext SQLite file: give its passphrase (--passphrase-file, --passphrase-env, --prompt) or --raw-key-file"
            )
        case .cannotOpen:
            return CLIFailure(status: .failure, message: "cannot read \(path)")
        case .tooSmall, .unknownPageSize:
            return CLIFailure(status: .failure, message: "\(path) holds no recognisable page (\(error))")
        case .invalidRawKey, .keyDerivationFailed:
            return CLIFailure(status: .usage, message: "unusable key: \(error)")
        }
    }
}

extension CipherCompatOptions {
    /// The input's key — the raw key file, else the passphrase options (`.none` for a plain input) — which is
    /// also the key OUTPUT gets by default.
    func inputEncryption(_ key: KeyOptions) throws -> Encryption {
        if let rawKeyFile {
            if key.passphraseFile != nil || key.passphraseEnv != nil || key.prompt {
                throw ValidationError("give either --raw-key-file or a passphrase option, not both")
            }
            return .rawKey(Data(try Self.readRawKey(rawKeyFile)))
        }
        return try key.encryption()
    }

    /// OUTPUT's cipher settings: a Coffer-format input (Coffer's default, SQLCipher 3, plaintext) keeps its
    /// page size and key derivation, as repair always did; anything else gets Coffer's defaults.
    func outputCipher(for file: DatabaseFile, key: KeyOptions) -> CipherOptions {
        let settings = file.settings
        switch settings.name {
        case CipherSettings.coffer.name, CipherSettings.sqlcipher3.name:
            return CipherOptions(settings: settings.with(pageSize: file.pageSize)) ?? CipherOptions()
        case CipherSettings.plaintext.name:
            var options = key.cipher
            options.pageSize = file.pageSize
            return options
        default:
            return CipherOptions()
        }
    }
}
