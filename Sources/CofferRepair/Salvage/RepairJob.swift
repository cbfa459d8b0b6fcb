import Coffer
import Foundation

/// One repair from a damaged file to a new database: the facade `coffer repair` and
/// ``Database/repair(to:backup:)`` both call, so that the order of its steps lives in one place.
///
/// 1. ``open(material:_:)`` opens the input with its own salt and, when no page authenticates, with the
///    copy of the salt kept in the backup's repair material.
/// 2. ``salvage(_:material:to:encryption:cipher:saltFromMaterial:progress:)`` runs the salvager (with the material's hints)
///    into a ``RepairWriter`` on a temporary name beside the destination, and renames it into place only when
///    every row is written, so a failed or interrupted repair leaves no half-written output. The input is
///    only ever read.
///
/// ```swift
/// let input = try RepairJob.open(material: nil) { salt in
///     try DatabaseFile(path: "damaged.db", key: .passphrase("secret"), salt: salt)
/// }
/// let report = try RepairJob.salvage(
///     Salvager(file: input.file), material: nil, to: "recovered.db", encryption: .passphrase("secret"),
///     cipher: CipherOptions())
/// print(report.rowsSalvaged)
/// ```
public enum RepairJob {
    /// The opened input and whether its salt came from the repair material.
    public struct Input {
        /// The damaged file, opened for the page decoder.
        public let file: DatabaseFile
        /// True when the file's own salt authenticated nothing and the material's copy did.
        public let saltFromMaterial: Bool
    }

    /// Opens the input with `open(nil)` — its own salt — and, when that throws and `material` keeps a
    /// 16-byte copy of the salt, once more with `open(salt)` (a wrong salt authenticates nothing, so trying it
    /// cannot produce a row). The first error is rethrown when there is no copy.
    public static func open(material: RepairMaterial?, _ open: (_ salt: [UInt8]?) throws -> DatabaseFile) throws -> Input {
        do {
            return Input(file: try open(nil), saltFromMaterial: false)
        } catch {
            guard let salt = material?.databaseSalt, salt.count == 16 else { throw error }
            return Input(file: try open([UInt8](salt)), saltFromMaterial: true)
        }
    }

    /// The temporary name `salvage` writes under before renaming into `destination`.
    public static func partialPath(for destination: String) -> String { destination + ".coffer-partial" }

    /// Salvages `salvager`'s file into a new database at `destination` (which must not exist), encrypted with
    /// `encryption` and `cipher`, with `material`'s hints; `progress` hears from the salvager as pages go by.
    /// `saltFromMaterial` (from ``Input``) goes into the report. Once `shouldStop` returns true (asked before
    /// each table and batch of rows), the salvage throws `CancellationError` and leaves no file behind.
    ///
    /// - Throws: ``CofferError/cantOpen`` when `destination` exists; the writer's or salvager's error, after
    ///   removing every partial file.
    public static func salvage(
        _ salvager: Salvager, material: RepairMaterial?, to destination: String, encryption: Encryption,
        cipher: CipherOptions, saltFromMaterial: Bool = false, progress: ((SalvageProgress) -> Void)? = nil,
        shouldStop: (@Sendable () -> Bool)? = nil
    ) throws -> RepairReport {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw CofferError(code: .cantOpen, message: "\(destination) already exists; repair never overwrites")
        }
        if let material { salvager.hints = SalvageHints(material: material) }
        let temporary = partialPath(for: destination)
        removeDatabaseFiles(temporary)
        let started = Date()
        var writer: RepairWriter?
        do {
            var opened = try RepairWriter(path: temporary, encryption: encryption, cipher: cipher)
            opened.shouldStop = shouldStop
            writer = opened
            var report = try salvager.run(into: &opened, pipeline: SalvagePipeline()) { progress?($0) }
            report.saltFromMaterial = saltFromMaterial
            opened.annotate(&report)
            try opened.close()
            writer = nil
            // The whole repair, the output flushed included (the engine's own figure stops at its last row).
            report.seconds = Date().timeIntervalSince(started)
            try FileManager.default.moveItem(atPath: temporary, toPath: destination)
            return report
        } catch {
            try? writer?.database.close()
            removeDatabaseFiles(temporary)
            throw error
        }
    }

    /// Removes a database file and its `-wal`, `-shm` and `-journal` companions, ignoring missing ones.
    public static func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
