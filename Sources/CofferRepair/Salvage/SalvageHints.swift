// SalvageHints — what a backup's repair material tells a salvage about the file it was taken from.
//
// The material (Coffer's `RepairMaterial`, kept encrypted beside backups) holds the schema with root pages,
// the file's salt and page size, and every B-tree's leaf pages, each with a checksum of the page *exactly as
// stored* (first 8 bytes of SHA-256, hex). How the Salvager uses it, and why it stays safe when the material
// is older than the file:
// - Salt: only when the file's own salt authenticates nothing (the caller retries with the material's salt;
//   a wrong salt authenticates nothing either, so it cannot produce a row).
// - Schema: only when sqlite_master cannot be read from the file. Root pages do not move in a file without
//   auto-vacuum, and every tree is still walked from the file itself.
// - Leaves: an orphan leaf whose stored bytes still match the checksum recorded for table T is T's page,
//   byte for byte as when the material was taken (SQLCipher writes a fresh IV with every write, so any
//   rewrite changes the checksum). It is attributed to T without scoring — but only where T's walk left a
//   hole (OrphanScorer rule 1 still applies: a page freed since the material was taken keeps its bytes
//   on a plaintext file). Leaves whose checksum no longer matches go through ordinary orphan scoring.

import Coffer

/// Evidence from backup repair material, handed to ``Salvager/hints``.
public struct SalvageHints: Sendable {
    /// sqlite_master rows: kind, name, table name, root page, SQL (nil for automatic indexes).
    public var schemaEntries: [SchemaEntry]
    /// Leaf page number → (owning table or index name, checksum of the stored page).
    public var leafOwners: [UInt32: (name: String, checksum: String)]

    /// Creates hints from a schema and leaf lists (tree name → leaves with their checksums).
    public init(schemaEntries: [SchemaEntry], leaves: [String: [(page: UInt32, checksum: String)]]) {
        self.schemaEntries = schemaEntries
        var owners: [UInt32: (name: String, checksum: String)] = [:]
        for (name, pages) in leaves {
            for leaf in pages { owners[leaf.page] = (name, leaf.checksum.lowercased()) }
        }
        leafOwners = owners
    }

    /// The hints a backup's repair material gives: its schema and every tree's leaf checksums.
    public init(material: RepairMaterial) {
        var leaves: [String: [(page: UInt32, checksum: String)]] = [:]
        for tree in material.trees where tree.name != "sqlite_master" {
            leaves[tree.name, default: []] += tree.leafPages.compactMap { leaf in
                guard leaf.pageNumber >= 2, leaf.pageNumber <= Int(UInt32.max) else { return nil }
                return (UInt32(leaf.pageNumber), leaf.checksum)
            }
        }
        self.init(schemaEntries: material.schema, leaves: leaves)
    }

    /// The schema the entries describe (validated like sqlite_master rows read from a file).
    func schema(pageCount: UInt32) -> Schema {
        var schema = Schema(entries: [], tables: [], isReadable: true)
        let rows = schemaEntries.map { entry -> [SalvagedValue] in
            [
                .text(Array(entry.kind.rawValue.utf8)), .text(Array(entry.name.utf8)), .text(Array(entry.tableName.utf8)),
                .integer(Int64(entry.rootPage)), entry.sql.map { .text(Array($0.utf8)) } ?? .null,
            ]
        }
        schema.add(rows: rows, pageCount: pageCount)
        return schema
    }
}
