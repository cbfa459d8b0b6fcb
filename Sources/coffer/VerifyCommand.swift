import ArgumentParser
import Coffer
import CofferRepair
import Foundation

/// `coffer verify DB [--quick]`: per-page HMAC scan and integrity_check (or quick_check).
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every page's HMAC and run PRAGMA integrity_check. Exit 0 clean, 1 damaged.")

    @Argument(help: "The database file.")
    var database: String

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @Flag(
        help:
            "Run PRAGMA quick_check instead of integrity_check: every page, cell and record still, but index entries are not matched to their rows (two to four times faster on indexed tables)."
    )
    var quick = false

    @OptionGroup var key: KeyOptions

    @OptionGroup var compat: CipherCompatOptions

    @Option(name: .customLong("page-map"), help: "Draw every page, coloured by kind and fate, into this SVG file.")
    var pageMap: String?

    func run() throws {
        if let pageMap { try PageMapOutput.write(file: compat.openFile(database, key: key), to: pageMap) }
        if compat.needsPageDecoder(key) { return try runDecoded() }
        var report: VerificationReport
        do {
            let configuration = try key.configuration()
            // A plaintext page of zeros is damage unless its role allows zeros (free, overflow): read for
            // on a second thread, beside the check (which leaves a core idle on a plaintext file).
            let zeroed =
                configuration.encryption.isEncrypted
                ? nil
                : SideThread(name: "coffer.verify.zeroes") { [database] in
                    (try? DatabaseFile(path: database, key: .none)).map {
                        DecodedInspection.zeroedPages(plaintext: $0).map(Int.init)
                    }
                }
            report = try Database.verify(path: database, configuration: configuration, depth: quick ? .quick : .full)
            if let pages = try zeroed?.join() { report.damagedPages = pages }
        } catch {
            if CLIFailure.isWrongPassphrase(error), !compat.isExplicit(key) { return try runDecoded() }
            throw CLIFailure(error, opening: database)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print("pages:           \(report.pageCount) × \(report.pageSize) bytes")
            print(
                "damaged pages:   \(report.damagedPages.isEmpty ? "none" : report.damagedPages.map(String.init).joined(separator: ", "))"
            )
            if !report.damagedWALPages.isEmpty {
                print("damaged in WAL:  \(report.damagedWALPages.map(String.init).joined(separator: ", "))")
            }
            for problem in report.walProblems { print("WAL:             \(problem)") }
            let errors = report.integrityErrors
            let shown =
                errors.prefix(20).joined(separator: "\n                 ")
                + (errors.count > 20 ? "\n                 … \(errors.count - 20) more" : "")
            print("\(quick ? "quick_check:    " : "integrity_check:") \(errors.isEmpty ? "ok" : shown)")
        }
        if !report.isClean {
            throw CLIFailure(status: .failure, message: "\(database) is damaged")
        }
    }
}
