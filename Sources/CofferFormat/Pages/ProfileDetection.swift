// ProfileDetection — finds which SQLCipher generation (and page size) wrote a file, from its key alone.
//
// Nothing in an encrypted file says how it was written: the salt (bytes 0–15) is all that is in clear.
// So each candidate profile is tried in turn, and the first one at which page 1's HMAC verifies at some
// page size wins (when page 1 is damaged, another page's HMAC proves the key; see DatabaseFile). Profile 1
// has no HMAC: it is accepted only when page 1 decrypts to a plausible SQLite header.
//
// Cost: a passphrase is stretched once per distinct (KDF, rounds) pair — Coffer's default and SQLCipher 4
// share one derivation, as do profiles 1 and 2 — and the result is handed to DatabaseFile as a raw key,
// which only derives the 2-round HMAC key. A raw key is never stretched. Candidates are tried cheapest
// stretch first, since only the right one can authenticate a page: SQLCipher 2 (4,000 rounds of SHA-1),
// SQLCipher 3 (64,000: older Coffer files and the 3.x shell's), then Coffer's default and SQLCipher 4
// (one shared 256,000-round SHA-512 stretch, about 0.15 s), and SQLCipher 1 last (no HMAC: its match is
// only a plausible header). A SQLCipher 3 file so skips the SHA-512 stretch (0.15 s of `coffer repair` on
// a 140 MB file); a SQLCipher 4 or Coffer file pays the two SHA-1 stretches first (a few milliseconds).
//
// A wrong passphrase fails every candidate at every page size: it is reported as the first candidate's
// error (`.wrongKey`, or `.saltDamagedOrWrongKey` when the salt looks destroyed) — never as "unknown format".

import Foundation

/// Finds the cipher profile and page size of an encrypted database from its key.
///
/// ```swift
/// let file = try ProfileDetection.open(path: "app.db", key: .passphrase("secret"))
/// print(file.settings.name, file.pageSize)   // "sqlcipher4 4096"
/// ```
public enum ProfileDetection {
    /// The profiles tried when none is given, in order, each with its page size left to detection.
    public static let defaultCandidates: [CipherSettings] = [
        CipherSettings.sqlcipher2, .sqlcipher3, .coffer, .sqlcipher4, .sqlcipher1,
    ].map { $0.with(pageSize: nil) }

    /// Opens `path` with the first of `candidates` under which the file authenticates.
    ///
    /// - Parameters:
    ///   - key: the passphrase or raw key.
    ///   - candidates: profiles to try in order (their `pageSize`, when set, skips page-size detection).
    ///   - salt: a known salt replacing the file's first 16 bytes (see ``DatabaseFile``).
    /// - Returns: the opened file; `file.settings.name` names the profile found.
    /// - Throws: ``DatabaseFileError``: `.wrongKey` when no candidate authenticates any page.
    public static func open(
        path: String, key: Encryption, candidates: [CipherSettings] = defaultCandidates, salt: [UInt8]? = nil
    ) throws(DatabaseFileError) -> DatabaseFile {
        let fileSalt: [UInt8]
        if let salt {
            fileSalt = salt
        } else {
            guard let read = try FileSalt.read(path: path) else { throw .tooSmall }
            fileSalt = read
        }
        var firstError: DatabaseFileError?
        let found = try firstMatch(candidates: candidates.filter(\.isEncrypted)) {
            profile throws(DatabaseFileError) -> SecureBytes in
            // The stretched page key, shared by the profiles with this (KDF, rounds); each derives its own HMAC key.
            try DerivedKeys(key: key, salt: fileSalt, settings: profile).encryptionKey
        } attempt: { profile, pageKey throws(DatabaseFileError) -> DatabaseFile? in
            do throws(DatabaseFileError) {
                let keys = try DerivedKeys(rawKey: pageKey, salt: fileSalt, settings: profile)
                return try DatabaseFile(path: path, keys: keys, settings: profile, salt: fileSalt)
            } catch {
                switch error {
                case .wrongKey, .saltDamagedOrWrongKey:
                    if firstError == nil { firstError = error }
                    return nil
                default:
                    throw error
                }
            }
        }
        if let found { return found }
        throw firstError ?? .wrongKey
    }

    /// The one loop behind every "which settings wrote this file" question — ``open(path:key:candidates:salt:)``
    /// here, and Coffer's detection of an existing file's derivation and page size when it opens one: tries
    /// `candidates` in order, stretching the key once per distinct (KDF, rounds) pair. `derive` stretches it
    /// for a candidate; `attempt` tries the candidate with that key and returns a match to stop, or nil to go
    /// on. Returns nil when no candidate matched.
    public static func firstMatch<Key, Match, Failure: Error>(
        candidates: [CipherSettings], derive: (CipherSettings) throws(Failure) -> Key,
        attempt: (CipherSettings, Key) throws(Failure) -> Match?
    ) throws(Failure) -> Match? {
        var derived: [DerivationKey: Key] = [:]
        for candidate in candidates {
            let slot = DerivationKey(algorithm: candidate.kdfAlgorithm, rounds: candidate.kdfRounds)
            let key: Key
            if let known = derived[slot] {
                key = known
            } else {
                key = try derive(candidate)
                derived[slot] = key
            }
            if let match = try attempt(candidate, key) { return match }
        }
        return nil
    }

    /// A one-line description of what was found, for reports: "sqlcipher4 (PBKDF2-HMAC-SHA512 256000
    /// rounds, HMAC-SHA512, 4096-byte pages, reserve 80)".
    public static func describe(_ file: DatabaseFile) -> String {
        describe(file.settings, pageSize: file.pageSize)
    }

    /// A one-line description of `settings` at `pageSize`.
    public static func describe(_ settings: CipherSettings, pageSize: Int) -> String {
        guard settings.isEncrypted else { return "plaintext, \(pageSize)-byte pages" }
        let kdf = settings.kdfAlgorithm.displayName
        let hmac: String
        switch settings.hmacAlgorithm {
        case .none: hmac = "no HMAC"
        case .sha1: hmac = "HMAC-SHA1"
        case .sha512: hmac = "HMAC-SHA512"
        }
        return
            "\(settings.name) (\(kdf) \(settings.kdfRounds) rounds, \(hmac), \(pageSize)-byte pages, reserve \(settings.reserveBytes))"
    }

    private struct DerivationKey: Hashable {
        let algorithm: KDFAlgorithm
        let rounds: Int
    }
}

extension CipherSettings {
    /// The settings of SQLCipher generation `version` (1–4) with the page size left to detection, or nil.
    public static func compatibility(_ version: Int) -> CipherSettings? {
        switch version {
        case 1: return CipherSettings.sqlcipher1.with(pageSize: nil)
        case 2: return CipherSettings.sqlcipher2.with(pageSize: nil)
        case 3: return CipherSettings.sqlcipher3.with(pageSize: nil)
        case 4: return CipherSettings.sqlcipher4.with(pageSize: nil)
        default: return nil
        }
    }

    /// The reserve SQLCipher uses for `hmac`: the 16-byte IV plus the HMAC, rounded up to 16.
    public static func defaultReserve(for hmac: HMACAlgorithm) -> Int {
        (16 + hmac.length + 15) / 16 * 16
    }
}
