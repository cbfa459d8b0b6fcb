// DatabaseFile — reads pages of a (possibly damaged, possibly encrypted) database file, one at a time.
//
// The file is opened read-only and read with pread, one page per call: memory stays bounded by the page
// size however large the file is. `pageCount` comes from the file's real size, never from the header (a
// header claiming 2^31 pages must not make us allocate or loop 2^31 times).
//
// Page size detection:
// - Plaintext: header bytes 16–17 (1 means 65536) when page 1 carries the SQLite magic and a power of two
//   in 512…65536; reserve from byte 20. If the magic is damaged, every candidate size that fits the file is
//   scored by the share of sampled pages that look like B-tree pages; bytes 16–17 win among the sizes
//   scoring within 3/4 of the best, else the smallest of those (a multiple of the true size scores as well
//   as the true size, since it too reads pages at true page boundaries).
// - Encrypted: the size is not stored in clear. Candidates 512…65536 (those dividing the file size first)
//   are tried and the one at which page 1's HMAC verifies wins. If page 1 fails at every size, other pages
//   are sampled: one that verifies proves the key right and page 1 damaged. If none verifies anywhere, the
//   key is wrong — or the salt (page 1 bytes 0–15, in clear, feeding both key derivations) is damaged,
//   which makes every page fail. A salt that does not look random (few distinct bytes, e.g. zeroed) is
//   reported as `.saltDamagedOrWrongKey`; otherwise `.wrongKey`.
// - Keys are derived once per file: the passphrase and salt do not depend on the page size.

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a database file could not be opened for salvage.
public enum DatabaseFileError: Error, Sendable, Equatable {
    /// The file does not exist or cannot be opened for reading.
    case cannotOpen(String)
    /// The file is shorter than one page.
    case tooSmall
    /// A raw key must be exactly 32 bytes.
    case invalidRawKey
    /// Key derivation failed (or an explicitly given salt is not 16 bytes).
    case keyDerivationFailed
    /// No page authenticates at any page size, and the salt looks intact: the key (or profile) is wrong.
    case wrongKey
    /// No page authenticates and page 1's salt looks damaged: the salt is damaged, or the key is wrong.
    case saltDamagedOrWrongKey
    /// A key was required (the file is not plaintext SQLite) but none was given.
    case keyRequired
    /// The page size could not be determined.
    case unknownPageSize
}

extension DatabaseFileError: CustomStringConvertible {
    /// A one-line explanation for users.
    public var description: String {
        switch self {
        case .cannotOpen(let path): return "cannot open \(path) for reading"
        case .tooSmall: return "the file is smaller than one page"
        case .invalidRawKey: return "a raw key must be exactly 32 bytes"
        case .keyDerivationFailed: return "key derivation failed"
        case .wrongKey: return "wrong key or cipher profile: no page authenticates at any page size"
        case .saltDamagedOrWrongKey:
            return "no page authenticates and the salt (first 16 bytes) looks damaged: salt destroyed, or wrong key"
        case .keyRequired: return "the file is not plaintext SQLite: a key is required"
        case .unknownPageSize: return "the page size could not be determined"
        }
    }
}

/// Something that serves plaintext pages by number: the main file, or the main file overlaid with a WAL.
public protocol PageSource: AnyObject {
    /// The page size in bytes.
    var pageSize: Int { get }
    /// The usable size U = page size − reserved bytes per page.
    var usableSize: Int { get }
    /// The number of pages that can be requested (1…pageCount).
    var pageCount: UInt32 { get }
    /// The plaintext page `pageNumber`, or why it is unreadable. Never trusted unless `.success`.
    func page(_ pageNumber: UInt32) -> Result<[UInt8], PageFailure>
}

/// A database file opened read-only for salvage.
///
/// ```swift
/// let file = try DatabaseFile(path: "damaged.db", key: .passphrase("secret"))
/// print(file.pageSize, file.pageCount, file.pageOneDamaged)
/// ```
public final class DatabaseFile: PageSource {
    /// The path of the file.
    public let path: String
    /// The settings in use, with the detected page size.
    public let settings: CipherSettings
    /// The page decoder (keys included).
    public let decoder: PageDecoder
    /// The page size in bytes.
    public let pageSize: Int
    /// The usable size U.
    public let usableSize: Int
    /// The file size in bytes.
    public let fileSize: UInt64
    /// The number of whole pages in the file (from its real size).
    public let pageCount: UInt32
    /// Whether page 1 failed to authenticate (encrypted) or lacks the SQLite magic (plaintext).
    public let pageOneDamaged: Bool
    /// The salt (page 1 bytes 0–15) of an encrypted file.
    public let salt: [UInt8]

    /// The file, borrowed from the process's descriptor table (see ``DescriptorTable``).
    private let file: ReadOnlyFile

    /// Opens `path`. Pass `key: .none` for a plaintext file. With a key, `settings` selects the SQLCipher
    /// profile (its `pageSize`, when set, skips detection). `salt` replaces the file's own salt (page 1
    /// bytes 0–15) when it is known from elsewhere (backup material) and the file's copy is damaged.
    ///
    /// - Throws: ``DatabaseFileError``, notably `.wrongKey` vs `.saltDamagedOrWrongKey`.
    public convenience init(
        path: String, key: Encryption, settings: CipherSettings = .sqlcipher3, salt knownSalt: [UInt8]? = nil
    ) throws(DatabaseFileError) {
        guard key.isEncrypted else {
            try self.init(path: path, settings: settings, salt: knownSalt, keys: nil)
            return
        }
        try self.init(path: path, settings: settings, salt: knownSalt) { salt throws(DatabaseFileError) in
            try DerivedKeys(key: key, salt: salt, settings: settings)
        }
    }

    /// Opens `path` with keys already derived for its salt (ProfileDetection stretches a passphrase once for
    /// several profiles).
    package convenience init(path: String, keys: DerivedKeys, settings: CipherSettings, salt: [UInt8]) throws(DatabaseFileError) {
        try self.init(path: path, settings: settings, salt: salt) { _ throws(DatabaseFileError) in keys }
    }

    /// The one opening routine: `keys` makes the keys from the salt in use, nil for a plaintext file.
    private init(
        path: String, settings: CipherSettings, salt knownSalt: [UInt8]?,
        keys makeKeys: ((_ salt: [UInt8]) throws(DatabaseFileError) -> DerivedKeys)?
    ) throws(DatabaseFileError) {
        guard let file = ReadOnlyFile(path: path) else { throw .cannotOpen(path) }
        self.path = path
        self.file = file
        let size = file.size
        fileSize = size
        guard size >= 512 else { throw .tooSmall }
        let head = DatabaseFile.read(file.descriptor, offset: 0, count: 100) ?? []

        if let makeKeys {
            guard settings.isEncrypted else { throw .keyRequired }
            if let knownSalt {
                // A salt that is not 16 bytes cannot feed the key derivation.
                guard knownSalt.count == 16 else { throw .keyDerivationFailed }
                salt = knownSalt
            } else {
                salt = Array(head.prefix(16))
            }
            let keys = try makeKeys(salt)
            let found = try DatabaseFile.detectEncrypted(
                fd: file.descriptor, fileSize: size, settings: settings, keys: keys, salt: salt)
            pageSize = found.pageSize
            pageOneDamaged = found.pageOneDamaged
            self.settings = settings.with(pageSize: found.pageSize)
            decoder = PageDecoder(settings: self.settings, keys: keys, pageSize: found.pageSize)
            usableSize =
                found.pageSize
                - DatabaseFile.btreeReserve(fd: file.descriptor, decoder: decoder, pageOneDamaged: found.pageOneDamaged)
        } else {
            salt = []
            let found = try DatabaseFile.detectPlaintext(fd: file.descriptor, fileSize: size, head: head)
            pageSize = found.pageSize
            pageOneDamaged = found.pageOneDamaged
            var plain = CipherSettings.plaintext.with(pageSize: found.pageSize)
            plain.reserveBytes = found.reserve
            self.settings = plain
            decoder = PageDecoder(settings: plain, keys: nil, pageSize: found.pageSize)
            usableSize = found.pageSize - found.reserve
        }
        pageCount = UInt32(clamping: size / UInt64(pageSize))
    }

    /// The page as stored on disk (still encrypted), or `nil` if it cannot be read whole.
    public func rawPage(_ pageNumber: UInt32) -> [UInt8]? {
        guard pageNumber >= 1, pageNumber <= pageCount else { return nil }
        let offset = UInt64(pageNumber - 1) * UInt64(pageSize)
        return DatabaseFile.read(file.descriptor, offset: offset, count: pageSize)
    }

    /// The plaintext page `pageNumber`: authenticated, decrypted, with the SQLite magic restored on page 1.
    public func page(_ pageNumber: UInt32) -> Result<[UInt8], PageFailure> {
        guard pageNumber >= 1, pageNumber <= pageCount else { return .failure(.outOfRange) }
        guard let raw = rawPage(pageNumber) else { return .failure(.ioError) }
        return decoder.decode(raw, pageNumber: pageNumber)
    }

    // MARK: - Detection

    static let candidateSizes = [4096, 1024, 512, 2048, 8192, 16384, 32768, 65536]

    /// The page sizes to try on a file of `fileSize` bytes, in order: `first` when given, then the powers of
    /// two 512…65536 that fit in the file, those that divide its size (a main file is whole pages) first,
    /// most common first (4096: Coffer's and SQLCipher 4's default; 1024: SQLCipher 1–3's).
    public static func candidatePageSizes(fileSize: UInt64, first: Int? = nil) -> [Int] {
        let fitting = candidateSizes.filter { UInt64($0) <= fileSize && $0 != first }
        let ordered = fitting.filter { fileSize % UInt64($0) == 0 } + fitting.filter { fileSize % UInt64($0) != 0 }
        return (first.map { [$0] } ?? []) + ordered
    }

    private static func detectEncrypted(
        fd: Int32, fileSize: UInt64, settings: CipherSettings, keys: DerivedKeys, salt: [UInt8]
    ) throws(DatabaseFileError) -> (pageSize: Int, pageOneDamaged: Bool) {
        let candidates = settings.pageSize.map { [$0] } ?? candidatePageSizes(fileSize: fileSize)
        guard let largest = candidates.max() else { throw .tooSmall }
        let head = read(fd, offset: 0, count: Int(min(UInt64(largest), fileSize))) ?? []
        if let size = pageOneSize(head: head, settings: settings, keys: keys, candidates: candidates) {
            return (size, false)
        }
        // Page 1 fails everywhere: does any other page verify?
        if settings.hmacAlgorithm != .none {
            for size in candidates {
                let decoder = PageDecoder(settings: settings, keys: keys, pageSize: size)
                let count = UInt32(clamping: fileSize / UInt64(size))
                for pageNumber in samplePages(count: count) {
                    let offset = UInt64(pageNumber - 1) * UInt64(size)
                    guard let raw = read(fd, offset: offset, count: size) else { continue }
                    if decoder.authenticates(raw, pageNumber: pageNumber) { return (size, true) }
                }
            }
        }
        if saltLooksDamaged(salt) { throw .saltDamagedOrWrongKey }
        throw .wrongKey
    }

    /// The first of `candidates` at which page 1 — the start of `head` — is valid under `keys` and `settings`:
    /// the one page-size loop behind opening a file here and Coffer's detection of an existing file's page
    /// size (CofferEngine's CipherDetection). Nil when none is.
    package static func pageOneSize(head: [UInt8], settings: CipherSettings, keys: DerivedKeys, candidates: [Int])
        -> Int?
    {
        candidates.first { size in
            size <= head.count
                && pageOneValid(Array(head[0..<size]), decoder: PageDecoder(settings: settings, keys: keys, pageSize: size))
        }
    }

    /// Page 1 is valid when its HMAC verifies, or, without HMAC, when it decrypts to a plausible header.
    private static func pageOneValid(_ raw: [UInt8], decoder: PageDecoder) -> Bool {
        if decoder.settings.hmacAlgorithm != .none { return decoder.authenticates(raw, pageNumber: 1) }
        guard case .success(let plain) = decoder.decode(raw, pageNumber: 1) else { return false }
        let view = ByteView(plain)
        guard let pageSize = DatabaseHeader.pageSize(plain), let reserve = view.u8(20) else { return false }
        return pageSize == decoder.pageSize && Int(reserve) == decoder.settings.reserveBytes
            && view.u8(21) == 64 && view.u8(22) == 32 && view.u8(23) == 32
    }

    /// Pages 2…17 plus a spread through the file: enough to find one intact page in a damaged file.
    static func samplePages(count: UInt32) -> [UInt32] {
        guard count >= 2 else { return [] }
        var pages = Array(2...min(count, 17))
        if count > 17 {
            for step in 1...16 { pages.append(UInt32(UInt64(count) * UInt64(step) / 17) + 1) }
        }
        var seen = Set<UInt32>()
        return pages.filter { $0 >= 2 && $0 <= count && seen.insert($0).inserted }
    }

    /// A random 16-byte salt has ~15 distinct bytes; a zeroed or patterned one has very few.
    static func saltLooksDamaged(_ salt: [UInt8]) -> Bool {
        salt.count < 16 || Set(salt).count < 8 || salt == sqliteMagic
    }

    private static func detectPlaintext(fd: Int32, fileSize: UInt64, head: [UInt8]) throws(DatabaseFileError)
        -> (pageSize: Int, reserve: Int, pageOneDamaged: Bool)
    {
        let view = ByteView(head)
        if head.count >= 100, Array(head.prefix(16)) == sqliteMagic, let size = DatabaseHeader.pageSize(head),
            let reserve = view.u8(20)
        {
            if UInt64(size) <= fileSize, Int(reserve) < size - 480 {
                return (size, Int(reserve), false)
            }
        }
        // Magic damaged: score each candidate by the share of sampled pages that parse as B-tree page
        // headers. A multiple of the true size reads true pages at every offset it tries and scores about as
        // well as the true size (a smaller size mostly lands mid-page and scores badly), so every size within
        // 3/4 of the best share qualifies; header bytes 16–17 win among them when they are a power of two
        // (flip-salt and a damaged magic leave them intact), else the smallest qualifying size.
        var shares: [(size: Int, share: Double)] = []
        for size in candidatePageSizes(fileSize: fileSize) {
            let count = UInt32(clamping: fileSize / UInt64(size))
            var sampled = 0
            var valid = 0
            for pageNumber in samplePages(count: count) {
                let offset = UInt64(pageNumber - 1) * UInt64(size)
                guard let raw = read(fd, offset: offset, count: size) else { continue }
                sampled += 1
                if BTreePageHeader(page: ByteView(raw), pageNumber: pageNumber, usableSize: size) != nil {
                    valid += 1
                }
            }
            if valid > 0 { shares.append((size, Double(valid) / Double(sampled))) }
        }
        guard let best = shares.map(\.share).max() else {
            if Array(head.prefix(16)) != sqliteMagic { throw .keyRequired }
            throw .unknownPageSize
        }
        let qualifying = shares.filter { $0.share >= 0.75 * best }.map(\.size).sorted()
        if let size = DatabaseHeader.pageSize(head), qualifying.contains(size) {
            let reserve = Int(view.u8(20) ?? 0)
            return (size, reserve < size - 480 ? reserve : 0, true)
        }
        return (qualifying.first ?? 4096, 0, true)
    }

    /// Reads exactly `count` bytes at `offset` of the open file `fd`, or returns `nil`.
    public static func read(_ fd: Int32, offset: UInt64, count: Int) -> [UInt8]? {
        ReadOnlyFile.read(fd, offset: offset, count: count, whole: true)
    }
}
