// Database+Vacuum — space reclamation that survives a kill at any moment.
//
// vacuum(): VacuumCopy fills `<path>-vacuum` (encrypted with the database's key and salt) while the writer
// is held, so no commit can be missed; then, as changePassphrase does, the readers are drained, the
// checkpointer suspended and the WAL checkpointed into the main file and truncated; the connections close
// (the last one removes the empty WAL); the new file, already fsynced, is renamed over the database and the
// directory fsynced; the writer reopens on it. A kill before the rename leaves the database as it was (and a
// stray `-vacuum` file, removed by the next vacuum); after it, as it became. Nothing else is ever written
// to the database file, and a WAL with frames is never left beside the new file (checked before renaming).
// Every page changes, so the next backup is a full one (the change tracker is invalidated).
//
// incrementalVacuum(): for `auto_vacuum = INCREMENTAL` files, `PRAGMA incremental_vacuum(N)` in steps of
// `stepPages`, each its own transaction: a kill loses at most the step in flight, never consistency.

import CSQLCipher
import CofferEngine
import CofferRecords
import Foundation

/// What a vacuum did.
public struct VacuumReport: Sendable, Equatable {
    /// Pages before (the database as readers saw it, WAL included).
    public var pagesBefore: Int
    /// Pages after.
    public var pagesAfter: Int
    /// Free pages before: what the vacuum could give back.
    public var freePagesBefore: Int
}

extension Database {
    /// Rewrites the database into a new file without free pages or fragmentation, in bounded memory, and
    /// puts it in place atomically. Writes wait while it runs; reads go on until the final swap.
    ///
    /// ```swift
    /// let report = try database.vacuum { progress in print(progress.step, progress.pagesWritten) }
    /// print("\(report.pagesBefore) → \(report.pagesAfter) pages")
    /// ```
    ///
    /// - Parameter batchRows: rows copied per transaction (memory use does not depend on it).
    /// - Throws: ``CofferError/invalidConfiguration`` on a read-only or in-memory database, or the error
    ///   that stopped the copy (the database is then unchanged and the partial copy removed).
    @discardableResult
    public func vacuum(batchRows: Int = 2000, progress: ((VacuumProgress) -> Void)? = nil) throws -> VacuumReport {
        try vacuum(batchRows: batchRows, progress: progress, control: nil)
    }

    /// ``vacuum(batchRows:progress:)`` that stops when `control` is cancelled during the copy (its
    /// statements are interrupted; the database is unchanged and the partial copy removed). Once the copy
    /// is complete the swap runs to its end.
    func vacuum(batchRows: Int, progress: ((VacuumProgress) -> Void)?, control: WorkControl?) throws -> VacuumReport {
        guard !configuration.readOnly, path != ":memory:" else {
            throw CofferError(code: .invalidConfiguration, message: "vacuum needs a writable database file")
        }
        let temporary = path + "-vacuum"
        let factory = self.factory
        var copyConfiguration = configuration
        copyConfiguration.temporaryStorage = .encryptedFiles
        copyConfiguration.readerCount = 0
        let copyFactory = ConnectionFactory(
            path: path, configuration: copyConfiguration, key: factory.key, corruption: factory.corruption)
        let key = factory.key
        let salt = try key.flatMap { try $0.salt ?? DatabaseKey.readSalt(path: path) }
        let cipher = configuration.cipher
        var report = VacuumReport(pagesBefore: 0, pagesAfter: 0, freePagesBefore: 0)
        let removeTemporary = {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        }
        try writer.sync { _ in
            removeTemporary()
            // Created empty here: ATTACH opens with the copy connection's flags, which do not create files.
            guard FileManager.default.createFile(atPath: temporary, contents: nil) else {
                throw CofferError(code: .cantOpen, message: "cannot create \(temporary)")
            }
            let copy = try copyFactory.open(.checkpointer)
            defer { copy.close() }
            do {
                report.pagesBefore = try copy.fetchValue(Int.self, sql: "PRAGMA main.page_count") ?? 0
                report.freePagesBefore = try copy.fetchValue(Int.self, sql: "PRAGMA main.freelist_count") ?? 0
                let spec = key.map { SecureBytes.rawKeySpec(key: $0.key, salt: salt) }
                let pageSize = try key?.pageSize ?? copy.pageSize(schema: "main") ?? 4096
                try VacuumCopy.attach(
                    copy, destination: temporary, keySpec: spec, pageSize: pageSize, encrypted: key != nil,
                    usesHMAC: cipher.usesHMAC, format: key?.pageFormat ?? .sqlcipher3)
                let run = VacuumCopy(
                    connection: copy, batchRows: max(1, batchRows), progress: progress,
                    pagesExpected: report.pagesBefore - report.freePagesBefore
                ).run
                if let control { try control.latch.run(on: copy, run) } else { try run() }
                report.pagesAfter = try copy.fetchValue(Int.self, sql: "PRAGMA \(VacuumCopy.schemaName).page_count") ?? 0
                try copy.execute(sql: "DETACH DATABASE \(VacuumCopy.schemaName)")
                try BackupFiles.fsyncFile(temporary)
            } catch {
                copy.close()
                removeTemporary()
                throw error
            }
        }
        progress?(VacuumProgress(step: "replace", pagesWritten: report.pagesAfter, pagesExpected: report.pagesAfter))
        try replaceFile(with: temporary)
        return report
    }

    /// Swaps the vacuumed file in: every connection closed, the WAL checkpointed away, an atomic rename,
    /// the writer reopened (readers reopen lazily).
    private func replaceFile(with temporary: String) throws {
        let path = self.path
        let hold = fileHold
        try withWriterAlone { connection, swap in
            // Everything committed went into the main file first (the checkpoint): its WAL must not outlive it.
            swap.detach(connection)
            var failure: (any Error)?
            do {
                let walBytes = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
                guard walBytes <= 32 else {
                    throw CofferError(code: .busy, message: "the WAL still holds frames (another process?); vacuum not applied")
                }
                for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                try BackupFiles.commitFile(URL(fileURLWithPath: temporary), as: URL(fileURLWithPath: path))
                // The path names a new file now: the hold moves to it before a connection locks it.
                hold?.follow(path: path)
            } catch {
                failure = error
                for suffix in ["", "-journal"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
            }
            try swap.reopen()
            if let failure { throw failure }
        }
    }

    /// Gives free pages back to the file system in an `auto_vacuum = INCREMENTAL` database: `PRAGMA
    /// incremental_vacuum` in steps of `stepPages`, each step its own transaction (a kill loses at most
    /// the step in flight). Returns the pages freed. `pages` bounds the work (nil: every free page).
    ///
    /// ```swift
    /// let freed = try database.incrementalVacuum { done, total in print("\(done)/\(total)") }
    /// ```
    ///
    /// - Throws: ``CofferError/invalidConfiguration`` when the database is not `auto_vacuum = INCREMENTAL`.
    @discardableResult
    public func incrementalVacuum(
        pages: Int? = nil, stepPages: Int = 256, progress: ((_ freed: Int, _ total: Int) -> Void)? = nil
    ) throws -> Int {
        let mode = try read { try $0.fetchValue(Int.self, sql: "PRAGMA auto_vacuum") } ?? 0
        guard mode == 2 else {
            throw CofferError(
                code: .invalidConfiguration,
                message:
                    "incremental vacuum needs auto_vacuum = INCREMENTAL (this database has \(["NONE", "FULL"][min(mode, 1)])); use vacuum()"
            )
        }
        let free = try write { try $0.fetchValue(Int.self, sql: "PRAGMA freelist_count") } ?? 0
        let total = min(free, pages ?? free)
        var freed = 0
        while freed < total {
            let step = min(max(1, stepPages), total - freed)
            let remaining = try write { connection -> Int in
                try connection.executeScript("PRAGMA incremental_vacuum(\(step))")
                return try connection.fetchValue(Int.self, sql: "PRAGMA freelist_count") ?? 0
            }
            let done = free - remaining
            if done <= freed { break }
            freed = done
            progress?(freed, total)
        }
        return freed
    }
}
