// coffer-corrupt — copies a database and damages the copy deterministically, for repair tests and demos.
//
//   coffer-corrupt INPUT --output OUT --kind KIND --seed N [--count K] [--passphrase-file F]
//                  [--page-size N] [--json]
//
// Exit status: 0 on success, 1 when the input cannot be opened or the kind has no target in this file
// (e.g. damage-freelist-trunk on a file without a freelist), 64 on a usage error.
// The damage logic lives in the CofferCorruption library, shared with the corpus tests.

import ArgumentParser
import CofferCorruption
import CofferRepair
import Foundation

extension DamageKind: ExpressibleByArgument {}

@main
struct CorruptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer-corrupt",
        abstract: "Copy a database and damage the copy, deterministically from a seed.",
        discussion: "Kinds: " + DamageKind.allCases.map(\.rawValue).joined(separator: ", "))

    @Argument(help: "The pristine database (read only).")
    var input: String

    @Option(name: .long, help: "Where to write the damaged copy (replaced if it exists).")
    var output: String

    @Option(name: .long, help: "The kind of damage.")
    var kind: DamageKind

    @Option(name: .long, help: "The seed (any 64-bit unsigned integer).")
    var seed: UInt64

    @Option(name: .long, help: "Pages to damage (flip-bytes) or run length (garbage-run, zero-leaf-run).")
    var count: Int?

    @Option(
        name: .customLong("passphrase-file"), help: "The passphrase of an encrypted input (one trailing newline is stripped).")
    var passphraseFile: String?

    @Option(name: .customLong("page-size"), help: "The cipher page size; detected when omitted.")
    var pageSize: Int?

    @Option(
        name: .customLong("cipher-compat"),
        help: "The SQLCipher generation that wrote an encrypted input: 1, 2, 3 (default) or 4.")
    var compat: Int = 3

    @Flag(name: .long, help: "Print one JSON object: kind, seed, pages [{page, role, owner}], …")
    var json = false

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let pageSize, !(512...65536).contains(pageSize) || pageSize & (pageSize - 1) != 0 {
            throw ValidationError("--page-size must be a power of two in 512…65536")
        }
        if input == output { throw ValidationError("--output must differ from INPUT") }
        if CipherSettings.compatibility(compat) == nil { throw ValidationError("--cipher-compat must be 1, 2, 3 or 4") }
    }

    func run() throws {
        let key = try readKey()
        let report: DamageReport
        do {
            report = try CorruptionInjector.inject(
                input: input, output: output, key: key,
                settings: (CipherSettings.compatibility(compat) ?? .sqlcipher3).with(pageSize: pageSize),
                kind: kind, seed: seed, count: count)
        } catch {
            FileHandle.standardError.write(Data("coffer-corrupt: \(error)\n".utf8))
            throw ExitCode.failure
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data = try encoder.encode(report)
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("\(report.kind.rawValue) seed \(report.seed): \(report.pages.count) page(s) of \(report.pageCount)")
            for page in report.pages {
                print("  page \(page.page)\t\(page.role)\t\(page.owner ?? "-")")
            }
            if let size = report.truncatedTo { print("  truncated to \(size) bytes") }
            if report.saltDamaged { print("  salt damaged: no page can be decrypted from the passphrase") }
        }
    }

    private func readKey() throws -> Encryption {
        guard let passphraseFile else { return .none }
        guard let encryption = Encryption.passphraseFile(atPath: passphraseFile) else {
            throw ValidationError("cannot read passphrase file \(passphraseFile)")
        }
        return encryption
    }
}
