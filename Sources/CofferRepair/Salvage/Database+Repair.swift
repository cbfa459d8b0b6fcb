import Coffer
import Foundation

extension Database {
    /// Salvages this database's file (and its WAL) into a new database at `destination`, under the same
    /// key and cipher settings: the self-healing path for an app whose ``Configuration/onCorruption``
    /// handler fired and that has no usable backup.
    ///
    /// The file is read page by page by the repair engine, never through SQLite, so damaged pages are
    /// skipped rather than fatal. `destination` must not exist. Writes and checkpoints of this database
    /// wait until the repair ends (the engine must see one state of the file and its WAL); reads go on.
    ///
    /// With `backup`, a directory written by ``Database/backup(to:kind:pagesPerStep:)``, the repair
    /// material kept there (decrypted with this database's key) supplies what the file lost, as
    /// `coffer repair --backup` does: a destroyed salt, the schema when sqlite_master is gone, and the
    /// table of every leaf page whose stored bytes still match their recorded checksum.
    ///
    /// ```swift
    /// let report = try database.repair(to: recoveredPath, backup: backupDirectory)
    /// try database.close()
    /// // move recoveredPath into place at the next launch
    /// ```
    ///
    /// - Throws: ``CofferError/cantOpen`` when `destination` exists; the material's load error when
    ///   `backup` holds no material this key decrypts; ``DatabaseFileError`` when no page authenticates.
    public func repair(to destination: String, backup: URL? = nil) throws -> RepairReport {
        try repair(to: destination, backup: backup, control: nil)
    }

    /// ``repair(to:backup:)`` as a sequence of progress events, in pages of this file examined, ending with
    /// `.finished(report)`. It starts at once, on a background thread.
    ///
    /// Stop iterating (cancel the task, or `break`) to stop the repair: it throws `CancellationError` into
    /// nothing at its next table or batch of rows, and `destination` is never created (the partial output
    /// is removed). This database's file is only read, either way.
    ///
    /// ```swift
    /// for try await event in database.repairWithProgress(to: recoveredPath) {
    ///     switch event {
    ///     case .progress(let pages, let total): print("\(pages)/\(total) pages examined")
    ///     case .finished(let report): print("\(report.rowsSalvaged) rows salvaged")
    ///     }
    /// }
    /// ```
    public func repairWithProgress(
        to destination: String, backup: URL? = nil
    ) -> AsyncThrowingStream<ProgressEvent<RepairReport>, any Error> {
        progressStream { control in try self.repair(to: destination, backup: backup, control: control) }
    }

    private func repair(to destination: String, backup: URL?, control: WorkControl?) throws -> RepairReport {
        // The file and its WAL stay still while the engine reads them: writes wait, checkpoints too.
        let report = try monitored("coffer.repair") {
            try withFrozenFiles { try salvage(to: destination, backup: backup, control: control) }
        }
        recordRepair(pages: report.pagesTotal, rows: report.rowsSalvaged)
        return report
    }

    private func salvage(to destination: String, backup: URL?, control: WorkControl?) throws -> RepairReport {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw CofferError(code: .cantOpen, message: "\(destination) already exists; repair never overwrites")
        }
        let encryption = unredactedEncryption
        let settings =
            !encryption.isEncrypted
            ? CipherSettings.plaintext : configuration.cipher.settings(derivation: keyDerivation ?? .sqlcipher3)
        let path = self.path
        let material = try backup.map { try RepairMaterial.load(directory: $0, encryption: encryption) }
        let input = try RepairJob.open(material: material) { salt in
            try DatabaseFile.withWALSaltFallback(path: path, salt: salt) { salt throws(DatabaseFileError) in
                try DatabaseFile(path: path, key: encryption, settings: settings, salt: salt)
            }
        }
        var cipher = configuration.cipher
        cipher.keyDerivation = keyDerivation ?? cipher.keyDerivation
        var progress: ((SalvageProgress) -> Void)?
        var shouldStop: (@Sendable () -> Bool)?
        if let control {
            try control.checkCancellation()
            progress = { control.progress(completed: $0.pagesScanned, total: $0.pagesTotal) }
            shouldStop = { control.latch.isCancelled }
        }
        return try RepairJob.salvage(
            Salvager(file: input.file), material: material, to: destination, encryption: encryption, cipher: cipher,
            saltFromMaterial: input.saltFromMaterial, progress: progress, shouldStop: shouldStop)
    }
}
