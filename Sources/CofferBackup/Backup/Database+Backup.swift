import CSQLCipher
import CofferEngine
import CofferFormat
import CofferRecords
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Database {
    /// What ``backup(to:kind:pagesPerStep:)`` writes.
    public enum BackupKind: Sendable, Hashable {
        /// Incremental when the directory's newest generation is the one this database last backed up
        /// to (and tracking has been running since), full otherwise.
        case automatic
        /// A complete copy, through SQLite's online backup API.
        case full
        /// Only the pages committed since the previous generation; throws when there is no base to
        /// build on.
        case incremental
    }

    /// Backs the database up into `directory` as a new generation, without stopping writers.
    ///
    /// A full backup copies `pagesPerStep` pages at a time with SQLite's online backup API from a
    /// dedicated connection that holds one read snapshot, so it never takes the writer (beyond an
    /// instant to start the snapshot) and never restarts under load. An incremental backup copies only
    /// the pages committed since the previous generation, still encrypted (see ``ChangedPageTracker``).
    /// Each data file is written under a temporary name, fsynced and renamed before its manifest, so a
    /// crash never leaves a torn generation. Repair material is refreshed beside the backups.
    ///
    /// ```swift
    /// let generation = try database.backup(to: URL(fileURLWithPath: "backups"))
    /// print(generation.kind, generation.byteCount)
    /// ```
    ///
    /// - Throws: ``CofferError/busy`` when an incremental backup cannot copy the whole WAL because a
    ///   reader holds an old snapshot (retry later), ``CofferError/corrupt`` when a page to copy fails
    ///   its HMAC, or the I/O error that stopped it.
    @discardableResult
    public func backup(to directory: URL, kind: BackupKind = .automatic, pagesPerStep: Int = 256) throws -> BackupGeneration {
        try backup(to: directory, kind: kind, pagesPerStep: pagesPerStep, control: nil)
    }

    /// ``backup(to:kind:pagesPerStep:)`` reporting to `control`, and stopping (no generation written, the
    /// changed-page set as it was) once it is cancelled.
    func backup(to directory: URL, kind: BackupKind, pagesPerStep: Int, control: WorkControl?) throws -> BackupGeneration {
        guard path != ":memory:" else {
            throw CofferError(code: .invalidConfiguration, message: "in-memory databases cannot be backed up to a directory")
        }
        let tracker = changeTracker
        tracker.backupLock.lock()
        defer { tracker.backupLock.unlock() }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CofferError(
                code: .cantOpen, message: "cannot create the backup directory \(directory.path): \(error.localizedDescription)")
        }
        let store = BackupDirectory(url: directory)
        store.removeTemporaryFiles()
        let latest = try store.generations().last
        if checkpointer != nil {
            let databasePath = path
            try writer.sync { _ in
                tracker.resumeIfUnchanged(directory: directory, latestGenerationID: latest?.id, databasePath: databasePath)
            }
        }
        let id = (latest?.id ?? 0) + 1
        let anchor = latest.map { ChangedPageTracker.Anchor(directory: directory.standardizedFileURL.path, generationID: $0.id) }
        let canIncrement =
            checkpointer != nil && anchor != nil && tracker.currentAnchor == anchor
            && latest.map { FileManager.default.fileExists(atPath: directory.appendingPathComponent($0.dataFile).path) } == true
        if kind == .incremental && !canIncrement {
            throw CofferError(
                code: .apiMisuse, message: "no base generation to build an incremental backup on: take a full backup first")
        }
        let generation = try spans.run("coffer.backup") {
            if kind != .full, canIncrement, let latest, let anchor {
                return try incrementalBackup(store: store, id: id, previous: latest, anchor: anchor, control: control)
            }
            return try fullBackup(store: store, id: id, pagesPerStep: max(pagesPerStep, 1), control: control)
        }
        factory.metrics?.backupBytes.increment(by: generation.byteCount)
        configuration.logger.debug(
            "backup written",
            metadata: [
                "generation": "\(generation.id)", "kind": "\(generation.kind.rawValue)", "bytes": "\(generation.byteCount)",
            ])
        return generation
    }

    /// Every generation in a backup directory, oldest first.
    public static func backupGenerations(in directory: URL) throws -> [BackupGeneration] {
        try BackupDirectory(url: directory).generations()
    }

    // MARK: Full

    private func fullBackup(store: BackupDirectory, id: Int, pagesPerStep: Int, control: WorkControl?) throws
        -> BackupGeneration
    {
        let final = store.url.appendingPathComponent(BackupDirectory.fullName(id))
        let temporary = BackupFiles.temporaryURL(for: final)
        defer {
            try? FileManager.default.removeItem(at: temporary)
            try? FileManager.default.removeItem(atPath: temporary.path + "-journal")
        }
        let tracker = changeTracker
        let salt = try databaseSalt()
        let source = try factory.open(.reader)
        defer { source.close() }
        let destination = try openBackupFile(temporary.path, salt: salt)
        defer { destination.close() }
        // The snapshot starts on the writer's queue, between two transactions, and the changed-page
        // set restarts at the same instant: increments on top of this base miss nothing.
        let tracks = checkpointer != nil
        try writer.sync { _ in
            try source.execute(sql: "BEGIN DEFERRED TRANSACTION")
            _ = try source.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master")
            if tracks { _ = tracker.reset(expecting: nil) }
        }
        let snapshot: SchemaSnapshot
        let pageCount: Int
        do {
            defer { source.rollbackIfNeeded() }
            snapshot = try SchemaSnapshot(connection: source)
            pageCount = try Self.copyPages(from: source, to: destination, pagesPerStep: pagesPerStep, control: control)
        } catch {
            tracker.invalidate()
            throw error
        }
        destination.close()
        do {
            try BackupFiles.commitFile(temporary, as: final)
            let generation = BackupGeneration(
                formatVersion: BackupGeneration.currentFormatVersion, id: id, kind: .full, chain: [id], createdAt: Date(),
                pageSize: snapshot.pageSize, pageCount: pageCount, storedPageCount: pageCount,
                byteCount: BackupFiles.size(of: final.path), sha256: try BackupFiles.sha256(of: final.path),
                dataFile: final.lastPathComponent, encrypted: factory.key != nil)
            try store.commit(generation)
            if tracks { tracker.setAnchor(.init(directory: store.url.standardizedFileURL.path, generationID: id)) }
            refreshRepairMaterial(store: store, generation: generation.id, salt: salt)
            return generation
        } catch {
            tracker.invalidate()
            throw error
        }
    }

    /// Runs `sqlite3_backup_step` until done; the source's open read transaction keeps it on one snapshot.
    /// Reports each step to `control` and stops with `CancellationError` when it is cancelled.
    private static func copyPages(
        from source: Connection, to destination: Connection, pagesPerStep: Int, control: WorkControl?
    ) throws -> Int {
        guard let backup = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
            throw destination.failure(code: sqlite3_errcode(destination.handle), sql: "sqlite3_backup_init")
        }
        var code: Int32 = SQLITE_OK
        var busyRetries = 0
        while true {
            if let control, control.latch.isCancelled {
                sqlite3_backup_finish(backup)
                throw CancellationError()
            }
            code = sqlite3_backup_step(backup, Int32(pagesPerStep))
            if let control {
                let total = Int(sqlite3_backup_pagecount(backup))
                control.progress(completed: total - Int(sqlite3_backup_remaining(backup)), total: total)
            }
            if code == SQLITE_OK { continue }
            if (code == SQLITE_BUSY || code == SQLITE_LOCKED) && busyRetries < 500 {
                busyRetries += 1
                sqlite3_sleep(2)
                continue
            }
            break
        }
        let pageCount = Int(sqlite3_backup_pagecount(backup))
        let finish = sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE else { throw destination.failure(code: code, sql: "sqlite3_backup_step") }
        guard finish == SQLITE_OK else { throw destination.failure(code: finish, sql: "sqlite3_backup_finish") }
        return pageCount
    }

    /// A new file keyed with this database's key *and salt*, so its pages and the main file's are
    /// interchangeable byte for byte (increments copy raw pages onto it).
    private func openBackupFile(_ path: String, salt: [UInt8]?) throws -> Connection {
        let connection = try Connection(
            path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, logger: configuration.logger)
        do {
            if let key = factory.key {
                let spec = SecureBytes.rawKeySpec(key: key.key, salt: salt)
                let code = spec.withUnsafeBytes { sqlite3_key(connection.handle, $0.baseAddress, Int32($0.count)) }
                guard code == SQLITE_OK else { throw connection.failure(code: code, sql: nil) }
                let pragmas = LinkedSQLCipher.pageFormatPragmas(
                    format: key.pageFormat, pageSize: configuration.cipher.pageSize,
                    usesHMAC: configuration.cipher.usesHMAC)
                try connection.executeScript(pragmas.joined(separator: "; "))
            }
            // The file is private until renamed, and fsynced by Coffer before that.
            try connection.executeScript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// The main file's salt (nil for plaintext). A new raw-keyed file may have page 1 only in the WAL:
    /// a checkpoint puts it in the main file.
    func databaseSalt() throws -> [UInt8]? {
        guard let key = factory.key else { return nil }
        if let salt = try key.salt ?? DatabaseKey.readSalt(path: path) { return salt }
        try checkpoint(.passive)
        guard let salt = try DatabaseKey.readSalt(path: path) else {
            throw CofferError(code: .notADatabase, message: "\(path) has no salt yet")
        }
        return salt
    }

    // MARK: Incremental

    private func incrementalBackup(
        store: BackupDirectory, id: Int, previous: BackupGeneration, anchor: ChangedPageTracker.Anchor, control: WorkControl?
    ) throws -> BackupGeneration {
        let final = store.url.appendingPathComponent(BackupDirectory.incrementalName(id))
        let temporary = BackupFiles.temporaryURL(for: final)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let tracker = changeTracker
        let salt = try databaseSalt()
        let codec = try factory.key.map { key in
            try DatabaseKey.pageDecoder(
                key: key.key, salt: salt ?? [], pageSize: previous.pageSize, usesHMAC: configuration.cipher.usesHMAC)
        }
        let writerOut = try IncrementalPageFile.Writer(path: temporary.path, pageSize: previous.pageSize)
        var captured = Set<UInt32>()
        var snapshot: SchemaSnapshot?
        var pageCount = 0
        var material: RepairMaterial?
        do {
            try tracker.checkpointGate.withLock {
                let capture = try captureChanges(anchor: anchor)
                captured = capture.pages
                pageCount = capture.pageCount
                snapshot = capture.snapshot
                // The gate keeps every checkpoint out: the main file holds exactly the captured state.
                let main = try PageFile(path: path, writable: false)
                let pageSize = previous.pageSize
                let total = captured.count
                for (index, pageNumber) in captured.sorted().enumerated() where Int(pageNumber) <= pageCount {
                    if let control, index % 256 == 0 {
                        try control.checkCancellation()
                        control.progress(completed: index, total: total)
                    }
                    let bytes = try main.read(count: pageSize, at: (Int(pageNumber) - 1) * pageSize)
                    guard bytes.count == pageSize else {
                        throw CofferError(code: .corrupt, message: "page \(pageNumber) is past the end of \(path)")
                    }
                    if let codec, !bytes.withUnsafeBytes({ codec.libraryAccepts($0, pageNumber: pageNumber) }) {
                        throw CofferError(code: .corrupt, message: "page \(pageNumber) of \(path) fails its HMAC")
                    }
                    try writerOut.append(pageNumber: pageNumber, bytes: bytes)
                }
                // After a schema change, fresh repair material from the main file, still frozen.
                if let snapshot, RepairMaterialStore(directory: store.url).latestSchemaVersion != snapshot.schemaVersion {
                    material = try? buildRepairMaterial(file: path, generation: id, salt: salt, snapshot: snapshot)
                }
            }
            try control?.checkCancellation()
            try writerOut.finish(pageCount: pageCount)
            try BackupFiles.commitFile(temporary, as: final)
            let generation = BackupGeneration(
                formatVersion: BackupGeneration.currentFormatVersion, id: id, kind: .incremental,
                chain: previous.chain + [id], createdAt: Date(), pageSize: previous.pageSize, pageCount: pageCount,
                storedPageCount: writerOut.recordCount, byteCount: BackupFiles.size(of: final.path),
                sha256: try BackupFiles.sha256(of: final.path), dataFile: final.lastPathComponent,
                encrypted: factory.key != nil)
            try store.commit(generation)
            tracker.setAnchor(.init(directory: anchor.directory, generationID: id))
            if let material {
                do {
                    try RepairMaterialStore(directory: store.url).write(
                        material, encryption: unredactedEncryption, iterations: materialKeyRounds)
                } catch {
                    configuration.logger.warning("repair material not written", metadata: ["error": "\(error)"])
                }
            }
            return generation
        } catch {
            if !captured.isEmpty || snapshot != nil { tracker.restore(captured, anchor: anchor) }
            throw error
        }
    }

    /// On the writer's queue: copies the whole WAL into the main file, then takes the changed-page set.
    /// The caller holds the checkpoint gate.
    private func captureChanges(anchor: ChangedPageTracker.Anchor) throws -> (
        pages: Set<UInt32>, pageCount: Int, snapshot: SchemaSnapshot
    ) {
        let tracker = changeTracker
        return try checkpointCompletely { connection in
            let snapshot = try SchemaSnapshot(connection: connection)
            guard let pages = tracker.reset(expecting: anchor) else {
                throw CofferError(
                    code: .apiMisuse,
                    message: "changed pages were not tracked since generation \(anchor.generationID): take a full backup")
            }
            return (pages, snapshot.pageCount, snapshot)
        }
    }

    /// Copies the whole WAL into the main file with a PASSIVE checkpoint on the writer's queue, then runs
    /// `body` there, before any further commit. The caller holds the checkpoint gate, so the main file
    /// then stays exactly at that commit until it lets go. Retries briefly while a reader's old snapshot
    /// keeps part of the WAL from being copied.
    func checkpointCompletely<R>(_ body: (Connection) throws -> R) throws -> R {
        // The bulk of the WAL is copied first from a connection of our own, so that the writer is held
        // only for the frames committed meanwhile (a long full backup can leave thousands behind).
        if let bulk = try? factory.open(.checkpointer) {
            sqlite3_wal_checkpoint_v2(bulk.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            bulk.close()
        }
        for attempt in 0..<100 {
            let result = try writer.sync { connection -> R? in
                var logFrames: Int32 = 0
                var copiedFrames: Int32 = 0
                let code = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copiedFrames)
                guard code == SQLITE_OK else { throw connection.failure(code: code, sql: "PRAGMA wal_checkpoint(PASSIVE)") }
                guard logFrames == copiedFrames else { return nil }
                return try body(connection)
            }
            if let result { return result }
            if attempt < 99 { usleep(2000) }
        }
        throw CofferError(
            code: .busy, message: "a reader keeps an old snapshot: the WAL could not be copied completely; retry later")
    }
}

/// The schema and layout at one snapshot, for manifests and repair material.
struct SchemaSnapshot: Sendable {
    let pageSize: Int
    let pageCount: Int
    let schemaVersion: Int
    let userVersion: Int
    let entries: [SchemaEntry]

    init(connection: Connection) throws {
        pageSize = try connection.pageSize() ?? 0
        pageCount = try connection.fetchValue(Int.self, sql: "PRAGMA page_count") ?? 0
        schemaVersion = try connection.fetchValue(Int.self, sql: "PRAGMA schema_version") ?? 0
        userVersion = try connection.fetchValue(Int.self, sql: "PRAGMA user_version") ?? 0
        let rows = try connection.fetchAll(sql: "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master")
        entries = rows.compactMap { row in
            guard let kind = SchemaEntryKind(rawValue: row["type"] ?? ""), let root = UInt32(exactly: row["rootpage"] ?? Int(0))
            else { return nil }
            return SchemaEntry(
                kind: kind, name: row["name"] ?? "", tableName: row["tbl_name"] ?? "", rootPage: root, sql: row["sql"])
        }
    }
}

extension Database {
    /// Async ``backup(to:kind:pagesPerStep:)``: runs on a background thread, never blocking the caller's.
    @discardableResult
    public func backup(to directory: URL, kind: BackupKind = .automatic, pagesPerStep: Int = 256) async throws -> BackupGeneration
    {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(with: Result { try self.backup(to: directory, kind: kind, pagesPerStep: pagesPerStep) })
            }
        }
    }
}
