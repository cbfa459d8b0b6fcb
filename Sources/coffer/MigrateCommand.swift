import ArgumentParser
import Coffer
import CofferRepair
import Foundation

/// `coffer migrate INPUT --output OUTPUT`: a full logical copy of an intact database — SQLCipher 1, 2, 3 or
/// 4, or plain SQLite — into Coffer's own format, checked table by table.
///
/// INPUT is read by Coffer's page decoder (whatever SQLCipher generation wrote it; detected unless
/// `--cipher-compat` or individual settings are given), with its WAL. OUTPUT gets the schema, every row,
/// rebuilt indexes, views, triggers, virtual tables, sqlite_sequence and `user_version`, and is then read back
/// through Coffer: the row count and a content hash of every table must match those of the rows decoded from
/// INPUT, and every other object must be in OUTPUT as INPUT declared it (each is listed with its verdict).
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy an intact SQLCipher 1–4 or plain SQLite database into Coffer's format, and check the copy.",
        discussion: """
            OUTPUT's key: --output-passphrase-file / --output-passphrase-env / --output-raw-key-file, or \
            --output-plaintext; by default the input's passphrase or raw key (a plain INPUT gives a plain OUTPUT \
            unless an output key is given). OUTPUT is written with Coffer's settings (SQLCipher 3 page format, \
            4096-byte pages, HMAC-SHA1, key by PBKDF2-HMAC-SHA512 256000 rounds), openable by Coffer, and by the \
            sqlcipher shell with the raw key. \
            Exit codes: 0 migrated and verified, 1 INPUT damaged (use repair) or the check failed (OUTPUT is kept \
            for inspection beside the report), 2 usage error, 3 wrong passphrase.
            """)

    @Argument(help: "The database to migrate (never modified).")
    var input: String

    @Option(name: .shortAndLong, help: "Where to write the Coffer database (must not exist).")
    var output: String

    @OptionGroup var key: KeyOptions

    @OptionGroup var compat: CipherCompatOptions

    @Option(help: "The WAL file to read (default: INPUT-wal when it exists).")
    var wal: String?

    @Option(name: .customLong("output-passphrase-file"), help: "OUTPUT's passphrase, from this file.")
    var outputPassphraseFile: String?

    @Option(name: .customLong("output-passphrase-env"), help: "OUTPUT's passphrase, from this environment variable.")
    var outputPassphraseEnv: String?

    @Option(name: .customLong("output-raw-key-file"), help: "OUTPUT's raw key (64 hex digits), from this file.")
    var outputRawKeyFile: String?

    @Flag(name: .customLong("output-plaintext"), help: "Write OUTPUT unencrypted.")
    var outputPlaintext = false

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    func validate() throws {
        if FileManager.default.fileExists(atPath: output) {
            throw ValidationError("OUTPUT \(output) already exists; migrate never overwrites")
        }
        let given = [outputPassphraseFile != nil, outputPassphraseEnv != nil, outputRawKeyFile != nil, outputPlaintext]
        if given.filter({ $0 }).count > 1 {
            throw ValidationError(
                "give at most one of --output-passphrase-file, --output-passphrase-env, --output-raw-key-file, --output-plaintext"
            )
        }
        if let outputPassphraseEnv, ProcessInfo.processInfo.environment[outputPassphraseEnv] == nil {
            throw ValidationError("environment variable \(outputPassphraseEnv) is not set")
        }
    }

    func run() throws {
        guard FileManager.default.fileExists(atPath: input) else {
            throw CLIFailure(status: .failure, message: "no such file: \(input)")
        }
        let outputEncryption = try self.outputEncryption()
        let file = try compat.openFile(input, key: key)
        let temporary = output + ".coffer-partial"
        RepairJob.removeDatabaseFiles(temporary)
        let result: MigrationResult
        do {
            result = try FileMigration.run(file: file, walPath: wal, output: temporary, encryption: outputEncryption)
        } catch {
            RepairJob.removeDatabaseFiles(temporary)
            throw CLIFailure(status: .failure, message: "migration failed, no OUTPUT written: \(error)")
        }
        do { try FileManager.default.moveItem(atPath: temporary, toPath: output) } catch {
            RepairJob.removeDatabaseFiles(temporary)
            throw CLIFailure(status: .failure, message: "cannot move the migrated file into place: \(error)")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print("migrated \(input) → \(output) (Coffer format, \(outputEncryption.isEncrypted ? "encrypted" : "plaintext"))")
            print("  input: \(ProfileDetection.describe(file))")
            let width = result.checks.map(\.table.count).max() ?? 0
            for check in result.checks {
                let name = check.table.padding(toLength: width, withPad: " ", startingAt: 0)
                let verdict =
                    check.matches
                    ? "ok" : "MISMATCH (in \(check.rowsIn) rows \(check.hashIn), out \(check.rowsOut) rows \(check.hashOut))"
                print("  \(name)  \(check.rowsOut) rows  sha256-sum \(check.hashOut.prefix(16))…  \(verdict)")
            }
            for object in result.objects {
                let verdict: String
                switch object.verdict {
                case .copied: verdict = "ok"
                case .keptAsTables: verdict = "NOT RECREATED: \(object.detail)"
                case .missing: verdict = "NOT COPIED: \(object.detail)"
                }
                print("  \(object.kind) \(object.name)  \(verdict)")
            }
            for issue in result.report.schemaIssues where !result.objects.contains(where: { $0.name == issue.name }) {
                print("  \(issue)")
            }
        }
        if !result.verified {
            throw CLIFailure(status: .failure, message: "the check failed: OUTPUT \(output) does not match \(input)")
        }
    }

    /// OUTPUT's key, from the output options or, by default, the input's.
    private func outputEncryption() throws -> Encryption {
        if outputPlaintext { return .none }
        if let outputRawKeyFile { return .rawKey(Data(try CipherCompatOptions.readRawKey(outputRawKeyFile))) }
        if let outputPassphraseFile {
            guard let encryption = Encryption.passphraseFile(atPath: outputPassphraseFile) else {
                throw ValidationError("cannot read passphrase file \(outputPassphraseFile)")
            }
            return encryption
        }
        if let outputPassphraseEnv, let value = ProcessInfo.processInfo.environment[outputPassphraseEnv] {
            return .passphrase(value)
        }
        return try compat.inputEncryption(key)
    }
}
