@_spi(CofferInternal) import Coffer
import Foundation

extension KeyMaterial {
    /// The repair engine's form of a Coffer encryption; nil for a plaintext database.
    public init?(_ encryption: Encryption) {
        switch encryption {
        case .none: return nil
        case .passphrase(let text): self = .passphrase(text)
        case .passphraseData(let data): self = .passphrase([UInt8](data))
        case .rawKey(let data): self = .rawKey([UInt8](data))
        }
    }
}

extension Database {
    /// Salvages this database's file (and its WAL) into a new database at `destination`, under the same
    /// key and cipher settings: the self-healing path for an app whose ``Configuration/onCorruption``
    /// handler fired and that has no usable backup.
    ///
    /// The file is read page by page by the repair engine, never through SQLite, so damaged pages are
    /// skipped rather than fatal. `destination` must not exist.
    ///
    /// ```swift
    /// let report = try database.repair(to: recoveredPath)
    /// try database.close()
    /// // move recoveredPath into place at the next launch
    /// ```
    public func repair(to destination: String) throws -> RepairReport {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw CofferError(code: .cantOpen, message: "\(destination) already exists; repair never overwrites")
        }
        let encryption = secretEncryption
        let key = KeyMaterial(encryption)
        var settings = key == nil ? CipherSettings.plaintext : .sqlcipher3
        if key != nil {
            settings.kdfRounds = configuration.cipher.kdfIterations
            settings.pageSize = configuration.cipher.pageSize
            if !configuration.cipher.usesHMAC {
                settings.hmacAlgorithm = .none
                settings.reserveBytes = 16
            }
        }
        let path = self.path
        let salvager = Salvager(
            file: try DatabaseFile.withWALSaltFallback(path: path, salt: nil) { salt throws(DatabaseFileError) in
                try DatabaseFile(path: path, key: key, settings: settings, salt: salt)
            })
        var writer = try RepairWriter(path: destination, encryption: encryption, cipher: configuration.cipher)
        do {
            let report = try salvager.run(into: &writer, pipeline: SalvagePipeline())
            try writer.close()
            return report
        } catch {
            try? writer.database.close()
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: destination + suffix) }
            throw error
        }
    }
}
