import CSQLCipher
import Foundation

extension Database {
    /// Re-encrypts the live database with a new passphrase or key, and the passphrase's key derivation.
    ///
    /// Waits for running reads, closes the readers and the checkpointer, rekeys through the writer (in
    /// rollback-journal mode, since SQLCipher 3 rekeys page by page and a WAL would mix keys), switches
    /// back to WAL and reopens readers lazily with the new key. Afterwards the old key fails to open the
    /// file and the new one works.
    ///
    /// A passphrase is derived with `keyDerivation`, by default the configured
    /// ``CipherOptions/keyDerivation`` — so changing the passphrase of a file found with SQLCipher 3's
    /// weaker derivation also upgrades it. ``keyDerivation`` tells which one the file has.
    ///
    /// ```swift
    /// try database.changePassphrase(to: .passphrase("new secret"))
    /// try database.changePassphrase(to: .passphrase("new secret"), keyDerivation: .pbkdf2SHA512(rounds: 500_000))
    /// ```
    public func changePassphrase(to newEncryption: Encryption, keyDerivation: KeyDerivation? = nil) throws {
        _ = try changePassphrase(to: newEncryption, keyDerivation: keyDerivation, control: nil)
    }

    /// ``changePassphrase(to:keyDerivation:)`` as a sequence of progress events, in pages re-encrypted,
    /// ending with `.finished(pages)`. It starts at once, on a background thread.
    ///
    /// SQLCipher rewrites the pages in one call (`sqlite3_rekey`) with no point to report from or stop at,
    /// so progress is read from outside it: every 20 ms, the pages its rollback journal holds (each page
    /// is journaled, under the old key, before it is rewritten under the new one). Stopping (cancel the task
    /// or `break`) before the rewrite starts changes nothing: the key stays and the call throws
    /// `CancellationError`. Once the rewrite has started it completes — the file is never left half
    /// re-encrypted — and the sequence finishes.
    ///
    /// ```swift
    /// for try await event in database.changePassphraseWithProgress(to: .passphrase("new secret")) {
    ///     if case .progress(let pages, let total) = event { print("re-encrypted \(pages)/\(total) pages") }
    /// }
    /// ```
    public func changePassphraseWithProgress(
        to newEncryption: Encryption, keyDerivation: KeyDerivation? = nil
    ) -> AsyncThrowingStream<ProgressEvent<Int>, any Error> {
        progressStream { control in try self.changePassphrase(to: newEncryption, keyDerivation: keyDerivation, control: control) }
    }

    /// The rekey, reporting to `control` when given; returns the pages re-encrypted.
    private func changePassphrase(to newEncryption: Encryption, keyDerivation: KeyDerivation?, control: WorkControl?) throws
        -> Int
    {
        guard factory.key != nil, newEncryption.isEncrypted else {
            throw CofferError(
                code: .invalidConfiguration,
                message:
                    "changePassphrase works between encrypted states; use Database.encrypt(plaintextAt:to:) or exportPlaintext(to:)"
            )
        }
        // Derived before readers are held: the salt and page size stay, only the key changes.
        let derivation = keyDerivation ?? configuration.cipher.keyDerivation
        try CipherOptions(keyDerivation: derivation).validate()
        guard let current = factory.key, let salt = try current.salt ?? DatabaseKey.readSalt(path: path),
            let newKey = try DatabaseKey.rekeyed(
                to: newEncryption, derivation: derivation, salt: salt, pageSize: current.pageSize,
                pageFormat: current.pageFormat)
        else {
            throw CofferError(code: .notADatabase, message: "\(path) has no salt to keep")
        }
        let path = self.path
        let factory = self.factory
        try control?.checkCancellation()
        // Every page is re-encrypted: no earlier backup generation can take increments any more (the
        // listener goes), and the gate keeps a running incremental backup's page reads and the rekey apart.
        return try withWriterAlone(checkpointSQL: "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;") {
            connection, swap in
            let pages = try connection.fetchValue(Int.self, sql: "PRAGMA page_count") ?? 0
            if let control, control.latch.isCancelled {
                // Nothing rewritten yet: back to a WAL writer under the same key.
                swap.detach(connection)
                try swap.reopen()
                throw CancellationError()
            }
            // Records decrypted under the old key go with it.
            factory.clock.clearAttachment()
            let spec = newKey.existingFileSpec()
            let watcher = control.map {
                RekeyProgress(journal: path + "-journal", pageSize: current.pageSize, total: pages, control: $0)
            }
            let code = spec.withUnsafeBytes { sqlite3_rekey(connection.handle, $0.baseAddress, Int32($0.count)) }
            watcher?.stop()
            // SQLCipher 3.4.1's rekey ignores the result of its own commit and switches the connection to the
            // new key anyway, so neither its return code nor this connection can be trusted: close it without
            // another statement and prove the outcome on a fresh writer. A failed commit leaves a hot journal
            // of old-key pages, which the reopen with the previous key rolls back.
            swap.detach(connection)
            let previousKey = factory.key
            if code == SQLITE_OK && !FileManager.default.fileExists(atPath: path + "-journal") {
                factory.replaceKey(newKey)
                do {
                    try swap.reopen()
                    control?.progress(completed: pages, total: pages)
                    return pages
                } catch CofferError.wrongPassphrase {
                    // The new key does not open the file: the rekey did not take. Any other failure (I/O)
                    // propagates with the new key kept, since the file is under it.
                    factory.replaceKey(previousKey)
                }
            }
            try swap.reopen()
            throw CofferError(code: .ioError, message: "the rekey did not commit; the database keeps its previous key")
        }
    }

    /// Rewrites the key with the same passphrase under another derivation: the in-place upgrade of a file
    /// written with SQLCipher 3's PBKDF2-HMAC-SHA1 64,000 (or any other), with ``changePassphrase(to:keyDerivation:)``'s
    /// guarantees.
    ///
    /// ```swift
    /// if database.keyDerivation != .coffer { try database.changeKeyDerivation(to: .coffer) }
    /// ```
    ///
    /// - Throws: ``CofferError/invalidConfiguration`` for a database opened with a raw key or none.
    public func changeKeyDerivation(to keyDerivation: KeyDerivation) throws {
        guard let key = factory.key, !key.isRawKey else {
            throw CofferError(code: .invalidConfiguration, message: "only a passphrase has a key derivation")
        }
        try changePassphrase(to: key.encryption, keyDerivation: keyDerivation)
    }

    /// Writes a plaintext copy of this encrypted database to `destination` (which must not exist),
    /// with `sqlcipher_export`, keeping `user_version`.
    public func exportPlaintext(to destination: String) throws {
        try Self.refuseExisting(destination)
        try writer.sync { connection in
            try Self.export(from: connection, to: destination, keySpec: nil, pageSize: nil)
        }
    }

    /// Encrypts the plaintext database at `source` into a new file at `destination`, which must not
    /// exist, with `sqlcipher_export` (SQLCipher's backup API cannot write plaintext into an encrypted
    /// file). `user_version` is kept.
    ///
    /// ```swift
    /// try Database.encrypt(plaintextAt: "legacy.db", to: "secure.db", encryption: .passphrase("pw"))
    /// ```
    public static func encrypt(
        plaintextAt source: String, to destination: String, encryption: Encryption, cipher: CipherOptions = CipherOptions()
    ) throws {
        try refuseExisting(destination)
        try cipher.validate()
        guard let key = try DatabaseKey.make(for: encryption, path: destination, options: cipher) else {
            throw CofferError(code: .invalidConfiguration, message: "encrypt(plaintextAt:to:) needs an encryption")
        }
        guard FileManager.default.fileExists(atPath: source) else {
            throw CofferError(code: .fileNotFound, message: "no database at \(source)")
        }
        // Read-write and create, because ATTACH opens the new file with the connection's flags.
        let plain = try Connection(
            path: source, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, logger: Configuration().logger)
        defer { plain.close() }
        try export(from: plain, to: destination, keySpec: key.keySpec, pageSize: cipher.pageSize)
    }

    private static func refuseExisting(_ destination: String) throws {
        if FileManager.default.fileExists(atPath: destination) {
            throw CofferError(code: .cantOpen, message: "\(destination) already exists")
        }
    }

    /// Attaches `destination` with `keySpec` (empty key = plaintext) and copies everything into it.
    private static func export(from connection: Connection, to destination: String, keySpec: SecureBytes?, pageSize: Int?) throws
    {
        try connection.attach(destination, as: "coffer_export", keySpec: keySpec)
        defer { try? connection.execute(sql: "DETACH DATABASE coffer_export") }
        if let pageSize {
            let pragmas = LinkedSQLCipher.pageFormatPragmas(
                schema: "coffer_export", format: .sqlcipher3, pageSize: pageSize, usesHMAC: true)
            try connection.executeScript(pragmas.joined(separator: "; "))
        }
        let userVersion = try connection.fetchValue(Int.self, sql: "PRAGMA main.user_version") ?? 0
        _ = try connection.fetchOne(sql: "SELECT sqlcipher_export('coffer_export')")
        try connection.executeScript("PRAGMA coffer_export.user_version = \(userVersion)")
    }
}

/// Reports a running rekey's progress from outside it: every 20 ms, the pages its rollback journal holds
/// (a journal record is a page number, the page and a checksum; the journal's header sector adds less than
/// one page, and the count is capped at the total).
private final class RekeyProgress: @unchecked Sendable {
    private let timer: any DispatchSourceTimer

    init(journal: String, pageSize: Int, total: Int, control: WorkControl) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        let record = max(pageSize, 512) + 8
        var reported = -1
        control.progress(completed: 0, total: total)
        timer.setEventHandler {
            let size = (try? FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int) ?? 0
            let pages = min(total, size / record)
            if pages > reported {
                reported = pages
                control.progress(completed: pages, total: total)
            }
        }
        timer.schedule(deadline: .now() + .milliseconds(20), repeating: .milliseconds(20))
        timer.resume()
    }

    /// Stops polling; no report follows its return.
    func stop() {
        let done = DispatchSemaphore(value: 0)
        timer.setCancelHandler { done.signal() }
        timer.cancel()
        done.wait()
    }
}
