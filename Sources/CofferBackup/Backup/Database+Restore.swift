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
    /// Rebuilds a database from a backup directory into `destination`.
    ///
    /// Takes generation `id` (default: the newest whose whole chain is intact — checksums are checked,
    /// and a damaged newer generation falls back to an older one), copies its full base to a temporary
    /// file beside `destination`, applies its increments in order after checking every page's HMAC,
    /// checks the HMAC of every page of the result and runs `PRAGMA integrity_check`, and only then
    /// renames it over `destination` (removing a stale `-wal`/`-shm` first).
    ///
    /// ```swift
    /// try Database.restore(from: backups, to: "app.db",
    ///                      configuration: Configuration(encryption: .passphrase("secret")),
    ///                      replacingExisting: true)
    /// ```
    ///
    /// - Throws: ``CofferError/cantOpen`` when `destination` exists and `replacingExisting` is false,
    ///   ``CofferError/fileNotFound`` when there is no restorable generation,
    ///   ``CofferError/wrongPassphrase``, or ``CofferError/corrupt`` when a page or the result is damaged.
    @discardableResult
    public static func restore(
        from directory: URL, to destination: String, configuration: Configuration, generation id: Int? = nil,
        replacingExisting: Bool = false
    ) throws -> BackupGeneration {
        try restore(
            from: directory, to: destination, configuration: configuration, generation: id,
            replacingExisting: replacingExisting, control: nil)
    }

    /// ``restore(from:to:configuration:generation:replacingExisting:)`` as a sequence of progress events, in
    /// pages, ending with `.finished(generation)`. It starts at once, on a background thread. The units are
    /// the base's pages copied, then each increment's pages applied, then the result's pages checked; the
    /// total grows as increments are read.
    ///
    /// Stop iterating (cancel the task, or `break`) to stop the restore: it throws `CancellationError` into
    /// nothing at its next step and removes its temporary file, and `destination` is left as it was. A
    /// restore that has begun its final rename completes.
    ///
    /// ```swift
    /// for try await event in Database.restoreWithProgress(from: backups, to: path, configuration: configuration) {
    ///     if case .progress(let done, let total) = event { print("restore: \(done)/\(total) pages") }
    /// }
    /// ```
    public static func restoreWithProgress(
        from directory: URL, to destination: String, configuration: Configuration, generation id: Int? = nil,
        replacingExisting: Bool = false
    ) -> AsyncThrowingStream<ProgressEvent<BackupGeneration>, any Error> {
        progressStream { control in
            try restore(
                from: directory, to: destination, configuration: configuration, generation: id,
                replacingExisting: replacingExisting, control: control)
        }
    }

    private static func restore(
        from directory: URL, to destination: String, configuration: Configuration, generation id: Int?,
        replacingExisting: Bool, control: WorkControl?
    ) throws -> BackupGeneration {
        if !replacingExisting && FileManager.default.fileExists(atPath: destination) {
            throw CofferError(code: .cantOpen, message: "\(destination) exists; restore refuses to overwrite it unless asked to")
        }
        let store = BackupDirectory(url: directory)
        let all = try store.generations()
        let target: BackupGeneration?
        if let id {
            target = all.first { $0.id == id }.flatMap { store.isRestorable($0) ? $0 : nil }
        } else {
            target = try store.latestRestorable()
        }
        guard let target else {
            throw CofferError(
                code: .fileNotFound, message: "no intact backup generation\(id.map { " \($0)" } ?? "") in \(directory.path)")
        }
        let byID = Dictionary(all.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let chain = target.chain.compactMap { byID[$0] }
        guard let base = chain.first, base.kind == .full else {
            throw CofferError(code: .corrupt, message: "generation \(target.id) has no full base")
        }
        let destinationURL = URL(fileURLWithPath: destination)
        let temporary = BackupFiles.temporaryURL(for: destinationURL)
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: temporary.path + suffix)
            }
        }
        do {
            try FileManager.default.copyItem(at: directory.appendingPathComponent(base.dataFile), to: temporary)
        } catch {
            throw CofferError(
                code: .cantOpen, message: "cannot copy the base generation to \(temporary.path): \(error.localizedDescription)")
        }

        // Progress, in pages: the base copied, each increment applied, the result checked.
        let basePages = max(1, (try? PageFile(path: temporary.path, writable: false).size) ?? 0) / base.pageSize
        var done = basePages
        var total = basePages * 2
        control?.progress(completed: done, total: total)
        try control?.checkCancellation()

        var codec: PageDecoder?
        // Derived once: the page checks use it, and so does the integrity check's connection.
        var derivedKey: DatabaseKey?
        if configuration.encryption.isEncrypted {
            guard
                let key = try DatabaseKey.make(for: configuration.encryption, path: temporary.path, options: configuration.cipher)
            else {
                throw CofferError(code: .invalidConfiguration, message: "no key")
            }
            derivedKey = key
            let candidate = try key.pageDecoder(
                path: temporary.path, pageSize: base.pageSize, usesHMAC: configuration.cipher.usesHMAC)
            let first = try PageFile(path: temporary.path, writable: false).read(count: base.pageSize, at: 0)
            guard first.withUnsafeBytes({ candidate.libraryAccepts($0, pageNumber: 1) }) else {
                throw CofferError(code: .wrongPassphrase, message: "the backup does not decrypt with this passphrase or key")
            }
            codec = candidate
        }
        let file = try PageFile(path: temporary.path, writable: true)
        for increment in chain.dropFirst() {
            let applied = try IncrementalPageFile.apply(
                directory.appendingPathComponent(increment.dataFile).path, to: file, codec: codec, pageSize: base.pageSize)
            done += applied
            total += applied
            control?.progress(completed: done, total: total)
            try control?.checkCancellation()
        }
        try file.sync()
        let checked = done
        total = checked + file.size / base.pageSize
        if let codec {
            let damaged = try damagedPages(in: file, codec: codec) { pages in
                control?.progress(completed: checked + pages, total: total)
                try control?.checkCancellation()
            }
            guard damaged.isEmpty else {
                throw CofferError(
                    code: .corrupt,
                    message: "restored pages fail their HMAC: \(damaged.prefix(20).map(String.init).joined(separator: ", "))")
            }
        }
        try control?.checkCancellation()
        let problems = integrityProblems(path: temporary.path, configuration: configuration, key: derivedKey)
        guard problems.isEmpty else {
            throw CofferError(
                code: .corrupt,
                message: "the restored database fails integrity_check: \(problems.prefix(5).joined(separator: "; "))")
        }
        try control?.checkCancellation()
        control?.progress(completed: total, total: total)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: destination + suffix) }
        try BackupFiles.commitFile(temporary, as: destinationURL)
        return target
    }

    /// Closes this database and replaces its file with the newest intact generation in `directory`:
    /// what an ``Configuration/onCorruption`` handler arranges for the next launch. Open a new
    /// ``Database`` afterwards; this one stays closed.
    ///
    /// ```swift
    /// configuration.onCorruption = { _ in UserDefaults.standard.set(true, forKey: "restoreAtLaunch") }
    /// // at launch, before opening normally:
    /// try Database.restore(from: backups, to: path, configuration: configuration, replacingExisting: true)
    /// ```
    @discardableResult
    public func restore(fromLatestBackup directory: URL) throws -> BackupGeneration {
        var configuration = self.configuration
        configuration.encryption = unredactedEncryption
        try? close()
        return try spans.run("coffer.restore") {
            try Self.restore(from: directory, to: path, configuration: configuration, replacingExisting: true)
        }
    }

    /// Page numbers in `file` whose HMAC fails, in one read of the file. All-zero pages pass, unless
    /// `zeroedAreDamaged` (SQLCipher reads such a page unchecked but never writes one: even a freed page
    /// is encrypted zeros), the never-written lock-byte page excepted. `checked` hears the pages checked
    /// so far after each batch, and may throw to stop.
    static func damagedPages(
        in file: PageFile, codec: PageDecoder, zeroedAreDamaged: Bool = false, checked: (Int) throws -> Void = { _ in }
    ) throws -> [Int] {
        let pageSize = codec.pageSize
        let pageCount = file.size / pageSize
        let lockBytePage = Int(DatabaseHeader.lockBytePage(pageSize: pageSize))
        var damaged: [Int] = []
        let batch = 256
        var page = 1
        while page <= pageCount {
            let count = min(batch, pageCount - page + 1)
            let bytes = try file.read(count: count * pageSize, at: (page - 1) * pageSize)
            bytes.withUnsafeBytes { buffer in
                for index in 0..<count where (index + 1) * pageSize <= buffer.count {
                    let slice = UnsafeRawBufferPointer(rebasing: buffer[(index * pageSize)..<((index + 1) * pageSize)])
                    let zeroed = zeroedAreDamaged && page + index != lockBytePage && slice[0] == 0 && slice.isAllZeroBytes
                    if zeroed || !codec.libraryAccepts(slice, pageNumber: UInt32(page + index)) {
                        damaged.append(page + index)
                    }
                }
            }
            page += count
            try checked(page - 1)
        }
        return damaged
    }

    /// `PRAGMA integrity_check` (`quick_check` at ``VerificationDepth/quick``) through a private connection,
    /// opened with `key` when the caller already derived it for this file (or its copy); errors that stop
    /// it count as problems.
    static func integrityProblems(
        path: String, configuration: Configuration, depth: VerificationDepth = .full, key: DatabaseKey? = nil,
        immutable: Bool = false
    ) -> [String] {
        var configuration = configuration
        configuration.readerCount = 0
        configuration.onCorruption = nil
        configuration.opensImmutable = immutable
        do {
            let database = try Database(path: path, configuration: configuration, derivedKey: key)
            defer { try? database.close() }
            // integrity_check allocates one bit per page the header claims (256 MiB for a header saying
            // 2^31): a count that the file and its WAL cannot hold is damage, reported without running it.
            let claimed = try database.read { try $0.fetchValue(Int.self, sql: "PRAGMA page_count") } ?? 0
            let pageSize = max(512, try database.read { try $0.pageSize() } ?? 4096)
            let possible = WALScan.mostPages(databasePath: path, pageSize: pageSize)
            if claimed > possible {
                return ["the database header claims \(claimed) pages; the file and its WAL hold at most \(possible)"]
            }
            let rows = try database.read { try $0.fetchAll(sql: "PRAGMA \(depth.pragma)") }
            // The first column, whatever its name: SQLite 3.15 names quick_check's column integrity_check.
            let messages = try rows.map { try $0.decode(String.self, at: 0) }
            return messages == ["ok"] ? [] : messages
        } catch {
            return ["\(error)"]
        }
    }
}
