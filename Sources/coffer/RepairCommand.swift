import ArgumentParser
import Coffer
import CofferRepair
import Foundation

/// `coffer repair INPUT --output OUTPUT`: salvages every row that survives in a damaged database into a
/// fresh one, with a report.
///
/// INPUT is only ever read. OUTPUT is written under a temporary name beside it and renamed into place only
/// when the salvage finished, so a failed or interrupted repair leaves no half-written OUTPUT.
struct RepairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Salvage every recoverable row of a damaged encrypted or plain database into a new one.",
        discussion: """
            With a passphrase, INPUT is read as SQLCipher 3 and OUTPUT is written encrypted with the same \
            passphrase and cipher settings (unless --plaintext-output); without one, INPUT and OUTPUT are plain. \
            Exit codes: 0 the salvage ran (even partially), 1 nothing could be salvaged, 2 usage error, \
            3 wrong passphrase.
            """)

    @Argument(help: "The damaged database (never modified).")
    var input: String

    @Option(name: .shortAndLong, help: "Where to write the salvaged database (must not exist).")
    var output: String

    @OptionGroup var key: KeyOptions

    @OptionGroup var compat: CipherCompatOptions

    @Option(help: "The WAL file to read (default: INPUT-wal when it exists).")
    var wal: String?

    @Option(help: "A backup directory whose repair material locates tables when the schema is gone.")
    var backup: String?

    @Option(help: "Write a JSON report here.")
    var report: String?

    @Flag(name: .customLong("plaintext-output"), help: "Write OUTPUT unencrypted even when INPUT is encrypted.")
    var plaintextOutput = false

    func validate() throws {
        if FileManager.default.fileExists(atPath: output) {
            throw ValidationError("OUTPUT \(output) already exists; repair never overwrites")
        }
        if let backup { throw ValidationError("--backup \(backup): repair material is not supported by this build yet") }
    }

    func run() throws {
        guard FileManager.default.fileExists(atPath: input) else {
            throw CLIFailure(status: .failure, message: "no such file: \(input)")
        }
        let encryption = try compat.inputEncryption(key)
        let salvager = Salvager(file: try compat.openFile(input, key: key), walPath: wal)
        let outputEncryption: Encryption = plaintextOutput ? .none : encryption
        let cipher = compat.outputCipher(for: salvager.file, key: key)
        let temporary = output + ".coffer-partial"
        removeDatabaseFiles(temporary)
        let progress = ProgressBar(enabled: Terminal.stderrIsTerminal)
        let salvage: RepairReport
        do {
            var writer = try RepairWriter(path: temporary, encryption: outputEncryption, cipher: cipher)
            salvage = try salvager.run(into: &writer) { progress.update($0) }
            try writer.close()
            progress.finish()
            if !Self.salvagedAnything(salvage) { removeDatabaseFiles(temporary) }
            else { try FileManager.default.moveItem(atPath: temporary, toPath: output) }
        } catch {
            progress.finish()
            removeDatabaseFiles(temporary)
            throw CLIFailure(status: .failure, message: "repair failed, no OUTPUT written: \(error)")
        }
        if let report {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            try encoder.encode(salvage).write(to: URL(fileURLWithPath: report))
        }
        guard Self.salvagedAnything(salvage) else {
            throw CLIFailure(status: .failure, message: "nothing could be salvaged from \(input); no OUTPUT written")
        }
        print(Self.summary(salvage, input: input, output: output, pageOneDamaged: salvager.file.pageOneDamaged))
    }

    /// A salvage that found no table and no row produced nothing worth an OUTPUT file.
    static func salvagedAnything(_ report: RepairReport) -> Bool {
        report.rowsSalvaged > 0 || !report.tables.isEmpty
    }

    /// Opens INPUT for salvage, turning key problems into the documented exit codes and messages.
    private func openInput(encryption: Encryption) throws -> Salvager {
        var settings = CipherSettings.plaintext
        var material: KeyMaterial?
        switch encryption {
        case .none:
            break
        case .passphrase(let text):
            material = .passphrase(text)
        case .passphraseData(let data):
            material = .passphrase([UInt8](data))
        case .rawKey(let data):
            material = .rawKey([UInt8](data))
        }
        if material != nil {
            settings = .sqlcipher3
            settings.kdfRounds = key.kdfIterations
        }
        settings.pageSize = key.pageSize
        do {
            return try Salvager(path: input, key: material, settings: settings, walPath: wal)
        } catch let error as DatabaseFileError {
            switch error {
            case .wrongKey:
                throw CLIFailure(
                    status: .wrongPassphrase,
                    message: "wrong passphrase: no page of \(input) authenticates with this key at any page size (page 1 and a sample of other pages checked)")
            case .saltDamagedOrWrongKey:
                throw CLIFailure(
                    status: .failure,
                    message: "no page of \(input) authenticates, and its salt (the first 16 bytes, which every page key depends on) looks damaged: either the salt is destroyed or the passphrase is wrong. Nothing can be decrypted from the passphrase alone.")
            case .keyRequired:
                throw CLIFailure(status: .usage, message: "\(input) is not a plaintext SQLite file: give its passphrase (--passphrase-file or --passphrase-env)")
            case .cannotOpen(let reason):
                throw CLIFailure(status: .failure, message: "cannot read \(input): \(reason)")
            case .tooSmall, .unknownPageSize:
                throw CLIFailure(status: .failure, message: "nothing could be salvaged: \(input) holds no recognisable page (\(error))")
            case .invalidRawKey, .keyDerivationFailed:
                throw CLIFailure(status: .usage, message: "unusable key: \(error)")
            }
        }
    }

    private func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    static func summary(_ report: RepairReport, input: String, output: String, pageOneDamaged: Bool) -> String {
        var parts = [
            "repaired \(input) (\(report.profile)) → \(output): \(report.rowsSalvaged) rows salvaged in \(report.tables.count) tables",
            "\(report.rowsDropped) dropped",
            "\(report.pagesOk)/\(report.pagesTotal) pages ok, \(report.pagesBadHMAC) failed HMAC, \(report.pagesUnparseable) unparseable",
            "\(report.orphanLeavesAdopted) orphan leaves adopted",
        ]
        if pageOneDamaged { parts.append("page 1 damaged (key verified on other pages)") }
        parts.append(String(format: "%.2f s", report.seconds))
        return parts.joined(separator: "; ")
    }
}

/// A one-line progress bar on standard error, drawn only on a terminal.
private final class ProgressBar {
    private let enabled: Bool
    private var lastDraw = Date.distantPast

    init(enabled: Bool) { self.enabled = enabled }

    func update(_ progress: SalvageProgress) {
        guard enabled, Date().timeIntervalSince(lastDraw) > 0.1 else { return }
        lastDraw = Date()
        let total = max(progress.pagesTotal, 1)
        let fraction = min(1, Double(progress.pagesScanned) / Double(total))
        let filled = Int(fraction * 30)
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
        let line = "\r[\(bar)] \(Int(fraction * 100))%  pages \(progress.pagesScanned)/\(progress.pagesTotal)  rows \(progress.rowsSalvaged)"
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        if enabled { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
