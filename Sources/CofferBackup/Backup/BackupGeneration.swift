import CofferEngine
import CofferRecords
import Foundation

/// The manifest of one backup generation, stored as `<id>.manifest.json` beside its data file.
///
/// A generation is either a **full** copy of the database (`<id>.full.db`, an encrypted SQLite file
/// under the same key and salt) or an **incremental** one (`<id>.incremental.pages`, the raw encrypted
/// images of the pages committed since the previous generation, see ``IncrementalPageFile``). A chain
/// is one full generation followed by its increments; restoring generation N applies its whole
/// ``chain`` in order. The manifest is written last, after its data file is on disk, so a generation
/// without a manifest never existed.
///
/// ```swift
/// for generation in try BackupDirectory(url: backups).generations() {
///     print(generation.id, generation.kind, generation.pageCount, generation.createdAt)
/// }
/// ```
public struct BackupGeneration: Codable, Sendable, Hashable {
    /// Full copy or pages changed since the previous generation.
    public enum Kind: String, Codable, Sendable {
        /// A complete database file.
        case full
        /// Changed pages on top of ``BackupGeneration/previousID``.
        case incremental
    }

    /// Version of this manifest format (1).
    public var formatVersion: Int
    /// Increasing number of the generation within its directory.
    public var id: Int
    /// Full or incremental.
    public var kind: Kind
    /// The generations to apply, in order, to restore this one: the full base first, this one last.
    public var chain: [Int]
    /// When the generation's snapshot was taken.
    public var createdAt: Date
    /// The database page size in bytes.
    public var pageSize: Int
    /// The database size in pages at the snapshot.
    public var pageCount: Int
    /// Pages stored in the data file (all of them for a full backup).
    public var storedPageCount: Int
    /// Size of the data file in bytes.
    public var byteCount: Int
    /// SHA-256 of the data file, hex.
    public var sha256: String
    /// The data file's name in the backup directory.
    public var dataFile: String
    /// Whether the pages are encrypted (SQLCipher) or plaintext.
    public var encrypted: Bool

    /// The full generation this one builds on (itself for a full one).
    public var baseID: Int { chain.first ?? id }
    /// The generation this one applies on top of (nil for a full one).
    public var previousID: Int? { chain.count >= 2 ? chain[chain.count - 2] : nil }

    static let currentFormatVersion = 1
}

/// A directory of backup generations: listing, choosing what to restore, and pruning.
public struct BackupDirectory: Sendable {
    /// The directory.
    public let url: URL

    /// A backup directory at `url` (created on first backup).
    public init(url: URL) { self.url = url }

    /// Every generation whose manifest reads, oldest first. Data files are not checked here; see
    /// ``isRestorable(_:)``.
    public func generations() throws -> [BackupGeneration] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw CofferError(
                code: .cantOpen, message: "cannot list the backup directory \(url.path): \(error.localizedDescription)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return names.filter { $0.hasSuffix(".manifest.json") && !$0.hasPrefix(".") }
            .compactMap { name in
                guard let data = FileManager.default.contents(atPath: url.appendingPathComponent(name).path) else { return nil }
                return try? decoder.decode(BackupGeneration.self, from: data)
            }
            .sorted { $0.id < $1.id }
    }

    /// True when every file of the generation's chain exists and matches its checksum.
    public func isRestorable(_ generation: BackupGeneration) -> Bool {
        let all = (try? generations()) ?? []
        let byID = Dictionary(all.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return generation.chain.allSatisfy { id in
            guard let member = byID[id] else { return false }
            return (try? BackupFiles.sha256(of: url.appendingPathComponent(member.dataFile).path)) == member.sha256
        }
    }

    /// The newest generation that can be restored, checking checksums from the newest down.
    public func latestRestorable() throws -> BackupGeneration? {
        try generations().reversed().first(where: isRestorable)
    }

    /// Deletes every chain but the newest `keep` (counted by full generations).
    public func prune(keepingChains keep: Int) throws {
        let all = try generations()
        let bases = all.filter { $0.kind == .full }.map(\.id).suffix(max(keep, 1))
        guard let oldestKept = bases.first else { return }
        for generation in all where generation.baseID < oldestKept {
            // Manifest first: a generation without a manifest is ignored even if its data file remains.
            try? FileManager.default.removeItem(at: url.appendingPathComponent(Self.manifestName(generation.id)))
            try? FileManager.default.removeItem(at: url.appendingPathComponent(generation.dataFile))
        }
    }

    /// Removes `.tmp-*` files a crash left mid-backup (one directory belongs to one database).
    func removeTemporaryFiles() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        for name in names where name.hasPrefix(".tmp-") {
            try? FileManager.default.removeItem(at: url.appendingPathComponent(name))
        }
    }

    static func manifestName(_ id: Int) -> String { String(format: "%06d.manifest.json", id) }
    static func fullName(_ id: Int) -> String { String(format: "%06d.full.db", id) }
    static func incrementalName(_ id: Int) -> String { String(format: "%06d.incremental.pages", id) }

    /// Writes the manifest atomically; the generation exists from then on.
    func commit(_ generation: BackupGeneration) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try BackupFiles.writeAtomically(
            try encoder.encode(generation), to: url.appendingPathComponent(Self.manifestName(generation.id)))
    }
}
