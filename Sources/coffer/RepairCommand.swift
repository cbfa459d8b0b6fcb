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
            With --backup DIR, the repair material Coffer keeps beside its backups (decrypted with the same \
            key) supplies a destroyed salt, the schema when sqlite_master is gone, and the table of every leaf \
            page whose stored bytes still match its checksum. \
            Exit codes: 0 the salvage ran (even partially), 1 nothing could be salvaged (or --backup holds no \
            usable material), 2 usage error, 3 wrong passphrase.
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

    @Option(name: .customLong("page-map"), help: "Draw every page, coloured by kind and fate, into this SVG file.")
    var pageMap: String?

    func validate() throws {
        if FileManager.default.fileExists(atPath: output) {
            throw ValidationError("OUTPUT \(output) already exists; repair never overwrites")
        }
        if let backup {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: backup, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--backup \(backup) is not a directory")
            }
        }
    }

    func run() throws {
        guard FileManager.default.fileExists(atPath: input) else {
            throw CLIFailure(status: .failure, message: "no such file: \(input)")
        }
        let encryption = try compat.inputEncryption(key)
        let material = try loadMaterial(encryption: encryption)
        let opened = try RepairJob.open(material: material) { salt in try compat.openFile(input, key: key, salt: salt) }
        let salvager = Salvager(file: opened.file, walPath: wal)
        let progress = ProgressBar(enabled: Terminal.stderrIsTerminal)
        let salvage: RepairReport
        do {
            salvage = try RepairJob.salvage(
                salvager, material: material, to: output, encryption: plaintextOutput ? .none : encryption,
                cipher: compat.outputCipher(for: salvager.file, key: key), saltFromMaterial: opened.saltFromMaterial
            ) { progress.update($0) }
            progress.finish()
            // Nothing found is not worth an OUTPUT file.
            if !Self.salvagedAnything(salvage) { RepairJob.removeDatabaseFiles(output) }
        } catch {
            progress.finish()
            throw CLIFailure(status: .failure, message: "repair failed, no OUTPUT written: \(error)")
        }
        if let report {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            try encoder.encode(salvage).write(to: URL(fileURLWithPath: report))
        }
        if let pageMap { try PageMapOutput.write(salvager: salvager, to: pageMap) }
        guard Self.salvagedAnything(salvage) else {
            throw CLIFailure(status: .failure, message: "nothing could be salvaged from \(input); no OUTPUT written")
        }
        print(Self.summary(salvage, input: input, output: output, pageOneDamaged: salvager.file.pageOneDamaged))
    }

    /// A salvage that found no table and no row produced nothing worth an OUTPUT file.
    static func salvagedAnything(_ report: RepairReport) -> Bool {
        report.rowsSalvaged > 0 || !report.tables.isEmpty
    }

    /// The repair material in `--backup`, or nil without the option. A directory without material, or
    /// material that does not decrypt with the key, is an error: the user asked for it.
    private func loadMaterial(encryption: Encryption) throws -> RepairMaterial? {
        guard let backup else { return nil }
        do {
            return try RepairMaterial.load(directory: URL(fileURLWithPath: backup), encryption: encryption)
        } catch {
            throw CLIFailure(status: .failure, message: "--backup \(backup): no usable repair material (\(error))")
        }
    }

    static func summary(_ report: RepairReport, input: String, output: String, pageOneDamaged: Bool) -> String {
        var parts = [
            "repaired \(input) (\(report.profile)) → \(output): \(report.rowsSalvaged) rows salvaged in \(report.tables.count) tables",
            "\(report.rowsDropped) dropped",
            "\(report.pagesOk)/\(report.pagesTotal) pages ok, \(report.pagesBadHMAC) failed HMAC, \(report.pagesZero) zeroed, \(report.pagesUnparseable) unparseable",
            "\(report.orphanLeavesAdopted) orphan leaves adopted",
        ]
        if pageOneDamaged { parts.append("page 1 damaged (key verified on other pages)") }
        parts.append(String(format: "%.2f s", report.seconds))
        // Objects that did not come back as they were, one per line after the summary.
        return ([parts.joined(separator: "; ")] + report.schemaIssues.map { "  \($0)" }).joined(separator: "\n")
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
        let line =
            "\r[\(bar)] \(Int(fraction * 100))%  pages \(progress.pagesScanned)/\(progress.pagesTotal)  rows \(progress.rowsSalvaged)"
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        if enabled { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
