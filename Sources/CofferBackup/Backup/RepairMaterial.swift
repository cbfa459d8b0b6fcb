import CofferEngine
import CofferFormat
import CofferRecords
import Foundation

/// What a repair engine needs to salvage a database whose own metadata is damaged, kept beside its
/// backups: the schema with root pages, the page layout and cipher settings, the file's salt, and the
/// leaf pages of every B-tree with a checksum each.
///
/// Coffer refreshes it with every full backup and with every incremental backup that follows a schema
/// change. It is stored encrypted (see ``RepairMaterialStore`` for the file format) under a key derived
/// from the database's passphrase or raw key with a salt of its own, so it opens even when the
/// database's salt — its first 16 bytes — is destroyed.
///
/// ```swift
/// let material = try RepairMaterial.load(directory: backups, encryption: .passphrase("secret"))
/// for tree in material.trees where tree.type == "table" {
///     print(tree.name, tree.leafPages.count)
/// }
/// ```
///
/// JSON field reference (format version 1): `formatVersion`, `createdAt` (ISO 8601), `generationID`,
/// `pageSize`, `pageCount`, `reservedBytes` (48 with HMAC, 16 without, 0 plaintext), `schemaVersion`,
/// `userVersion`, `databaseSalt` (base64 of the 16 clear bytes, absent for plaintext), `cipher`,
/// `schema` (the `sqlite_master` rows), `trees` (one per root page, `sqlite_master` included, with
/// `leafPages` and `interiorPages`), `unreadablePages` (pages the walk could not decrypt or parse).
public struct RepairMaterial: Codable, Sendable, Hashable {
    /// A leaf page and the checksum of its image in the database file.
    public struct LeafPage: Codable, Sendable, Hashable {
        /// The page number.
        public var pageNumber: Int
        /// First 8 bytes of SHA-256, hex, over the page's `pageSize` bytes exactly as stored in the
        /// database file (ciphertext, IV, HMAC, trailing bytes). SQLCipher writes a fresh IV on every
        /// write, so a page with this checksum is the very image the material describes, and any
        /// rewrite of the page since shows as a mismatch.
        public var checksum: String
    }

    /// One B-tree (a table, an index, or `sqlite_master`).
    public struct Tree: Codable, Sendable, Hashable {
        /// The table or index name.
        public var name: String
        /// `table` or `index`.
        public var type: String
        /// The root page.
        public var rootPage: Int
        /// Its leaf pages in key order.
        public var leafPages: [LeafPage]
        /// Its interior pages.
        public var interiorPages: [Int]
    }

    /// Version of this format (1).
    public var formatVersion: Int
    /// When the material was taken.
    public var createdAt: Date
    /// The backup generation it describes.
    public var generationID: Int
    /// The page size.
    public var pageSize: Int
    /// The database size in pages.
    public var pageCount: Int
    /// Bytes reserved at the end of each page.
    public var reservedBytes: Int
    /// `PRAGMA schema_version` at the snapshot.
    public var schemaVersion: Int
    /// `PRAGMA user_version` at the snapshot.
    public var userVersion: Int
    /// The database file's 16-byte salt (nil for plaintext).
    public var databaseSalt: Data?
    /// The page cipher (nil for plaintext): CofferFormat's ``CipherSettings``, named after its profile,
    /// with the page size and reserve above; `kdfRounds` is 0 for a raw key. Stored spelled out (see
    /// ``RepairMaterial`` for the JSON), so a reader needs no defaults of its own.
    public var cipher: CipherSettings?
    /// `sqlite_master`.
    public var schema: [SchemaEntry]
    /// Every B-tree's pages.
    public var trees: [Tree]
    /// Pages the walk could not read.
    public var unreadablePages: [Int]

    /// Loads the newest intact material in `directory`, decrypting it with the database's passphrase
    /// or raw key.
    ///
    /// - Throws: ``CofferError/fileNotFound`` when there is none, ``CofferError/wrongPassphrase`` when
    ///   no copy decrypts with `encryption`, ``CofferError/corrupt`` when every copy is damaged.
    public static func load(directory: URL, encryption: Encryption) throws -> RepairMaterial {
        try RepairMaterialStore(directory: directory).load(encryption: encryption)
    }
}

extension Database {
    /// PBKDF2 rounds for the repair material's own key: as many as the database's derivation has.
    var materialKeyRounds: Int { keyDerivation?.rounds ?? configuration.cipher.keyDerivation.rounds }

    /// Writes repair material beside the backups, describing the live main file: its checksums are
    /// of the page images a repair engine will find there. The main file is frozen at the latest
    /// commit (checkpoint gate held, whole WAL copied in) during the walk; writers keep committing.
    /// Failures are logged: the backup itself stands.
    func refreshRepairMaterial(store: BackupDirectory, generation: Int, salt: [UInt8]?) {
        do {
            let material = try changeTracker.checkpointGate.withLock { () throws -> RepairMaterial in
                let snapshot = try checkpointCompletely { try SchemaSnapshot(connection: $0) }
                return try buildRepairMaterial(file: path, generation: generation, salt: salt, snapshot: snapshot)
            }
            try RepairMaterialStore(directory: store.url).write(
                material, encryption: unredactedEncryption, iterations: materialKeyRounds)
        } catch {
            configuration.logger.warning("repair material not written", metadata: ["error": "\(error)"])
        }
    }

    /// Walks every B-tree of `file` (a backup, or the main file while the checkpoint gate is held).
    func buildRepairMaterial(file: String, generation: Int, salt: [UInt8]?, snapshot: SchemaSnapshot) throws -> RepairMaterial {
        let decoder =
            try factory.key.map {
                try DatabaseKey.pageDecoder(
                    key: $0.key, salt: salt ?? [], pageSize: snapshot.pageSize, usesHMAC: configuration.cipher.usesHMAC)
            } ?? PageDecoder(settings: .plaintext, keys: nil, pageSize: snapshot.pageSize)
        let pageFile = try PageFile(path: file, writable: false)
        var roots = [(name: "sqlite_master", type: "table", root: 1)]
        roots += snapshot.entries.filter { $0.rootPage > 0 }.map { ($0.name, $0.kind.rawValue, Int($0.rootPage)) }
        let pageSize = snapshot.pageSize
        let walk = TreePageList(decoder: decoder, pageCount: snapshot.pageCount) { page in
            try? pageFile.read(count: pageSize, at: (page - 1) * pageSize)
        }
        var unreadable = Set<Int>()
        let trees = roots.map { root -> RepairMaterial.Tree in
            let pages = walk.pages(root: root.root)
            unreadable.formUnion(pages.unreadable)
            return RepairMaterial.Tree(
                name: root.name, type: root.type, rootPage: root.root,
                leafPages: pages.leaves.map { .init(pageNumber: $0.pageNumber, checksum: $0.checksum) },
                interiorPages: pages.interior)
        }
        let cipher = factory.key.map { key in
            configuration.cipher.settings(derivation: key.derivation).with(pageSize: snapshot.pageSize)
        }
        let reserved = factory.key == nil ? 0 : decoder.settings.reserveBytes
        return RepairMaterial(
            formatVersion: 1, createdAt: Date(), generationID: generation, pageSize: snapshot.pageSize,
            pageCount: snapshot.pageCount, reservedBytes: reserved, schemaVersion: snapshot.schemaVersion,
            userVersion: snapshot.userVersion, databaseSalt: salt.map { Data($0) }, cipher: cipher,
            schema: snapshot.entries, trees: trees, unreadablePages: unreadable.sorted())
    }
}
