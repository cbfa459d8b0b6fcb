// CorruptionInjector — copies a pristine database and damages the copy according to a DamagePlan.
//
// The roles come from the pristine input (never from the copy): they describe what the damage destroyed.
// The input is only read; the output is written with plain file I/O (no SQLite), so no library cache or
// journal can hide or repair the damage.

import CofferRepair
import Foundation

/// Injects deterministic damage into a copy of a database file.
///
/// ```swift
/// let report = try CorruptionInjector.inject(
///     input: "chat.db", output: "broken.db", key: .passphrase("secret"), kind: .zeroInterior, seed: 7)
/// for page in report.pages { print(page.page, page.role, page.owner ?? "-") }
/// ```
public enum CorruptionInjector {
    /// Opens `input` (with `key`, `.none` for plaintext), plans `kind` from `seed`, writes the damaged copy to
    /// `output` (replacing it) and reports the touched pages with their pristine roles.
    public static func inject(
        input: String, output: String, key: Encryption, settings: CipherSettings = .sqlcipher3,
        kind: DamageKind, seed: UInt64, count: Int? = nil
    ) throws(CorruptionError) -> DamageReport {
        let file: DatabaseFile
        do { file = try DatabaseFile(path: input, key: key, settings: key.isEncrypted ? settings : .plaintext) } catch {
            throw .cannotOpen("\(input): \(error)")
        }
        let roles = PageRoles.classify(file)
        let planner = DamagePlanner(
            roles: roles.map(\.role), pageSize: file.pageSize, encrypted: key.isEncrypted, fileSize: file.fileSize)
        let plan = try planner.plan(kind: kind, seed: seed, count: count)
        try copy(input, to: output)
        try apply(plan, to: output)
        let pages = plan.touched.sorted().map { page in
            let info = Int(page) <= roles.count ? roles[Int(page) - 1] : nil
            return TouchedPage(page: page, role: info?.role.rawValue ?? PageRole.unknown.rawValue, owner: info?.owner)
        }
        return DamageReport(
            kind: kind, seed: seed, pages: pages, pageSize: file.pageSize, pageCount: file.pageCount,
            encrypted: key.isEncrypted, truncatedTo: plan.truncatedTo, saltDamaged: key.isEncrypted && plan.touchesFirst16Bytes)
    }

    /// Copies `source` to `destination`, replacing it (and removing a stale `-wal`/`-shm` beside it).
    static func copy(_ source: String, to destination: String) throws(CorruptionError) {
        let manager = FileManager.default
        do {
            for path in [destination, destination + "-wal", destination + "-shm"] where manager.fileExists(atPath: path) {
                try manager.removeItem(atPath: path)
            }
            try manager.copyItem(atPath: source, toPath: destination)
        } catch {
            throw .io("copying \(source) to \(destination): \(error.localizedDescription)")
        }
    }

    /// Applies the plan's edits to the file at `path`.
    public static func apply(_ plan: DamagePlan, to path: String) throws(CorruptionError) {
        guard let handle = FileHandle(forUpdatingAtPath: path) else { throw .io("cannot open \(path) for writing") }
        defer { try? handle.close() }
        do {
            for edit in plan.edits {
                switch edit {
                case .write(let offset, let bytes):
                    try handle.seek(toOffset: offset)
                    try handle.write(contentsOf: Data(bytes))
                case .xor(let offset, let mask):
                    try handle.seek(toOffset: offset)
                    guard let original = try handle.read(upToCount: 1), let byte = original.first else {
                        throw CorruptionError.io("offset \(offset) is past the end of \(path)")
                    }
                    try handle.seek(toOffset: offset)
                    try handle.write(contentsOf: Data([byte ^ mask]))
                case .truncate(let size):
                    try handle.truncate(atOffset: size)
                }
            }
            try handle.synchronize()
        } catch let error as CorruptionError {
            throw error
        } catch {
            throw .io("writing \(path): \(error.localizedDescription)")
        }
    }
}
