import ArgumentParser
import Coffer
import Foundation

/// `coffer restore DIR --to DB`: rebuilds a database from a backup directory.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Rebuild a database from the newest intact generation of a backup directory.",
        discussion:
            "Every page's HMAC and the result's integrity_check are verified before the file is put in place. An existing DB is never overwritten without --force."
    )

    @Argument(help: "The backup directory.")
    var directory: String

    @Option(name: .customLong("to"), help: "Where to write the restored database.")
    var destination: String?

    @Option(help: "Restore this generation instead of the newest intact one.")
    var generation: Int?

    @Flag(help: "Replace DB if it exists.")
    var force = false

    @Flag(help: "List the generations instead of restoring.")
    var list = false

    @OptionGroup var key: KeyOptions

    func run() throws {
        let url = URL(fileURLWithPath: directory)
        if list {
            let store = BackupDirectory(url: url)
            for generation in try store.generations() {
                let state = store.isRestorable(generation) ? "ok" : "DAMAGED"
                print(
                    "\(generation.id)\t\(generation.kind.rawValue)\tchain \(generation.chain.map(String.init).joined(separator: "+"))\t\(generation.pageCount) pages\t\(generation.byteCount) bytes\t\(ISO8601DateFormatter().string(from: generation.createdAt))\t\(state)"
                )
            }
            return
        }
        guard let destination else { throw ValidationError("restore needs --to DB (or --list)") }
        if !force && FileManager.default.fileExists(atPath: destination) {
            throw CLIFailure(status: .failure, message: "\(destination) exists; pass --force to replace it")
        }
        let restored: BackupGeneration
        do {
            restored = try Database.restore(
                from: url, to: destination, configuration: try key.configuration(), generation: generation,
                replacingExisting: force)
        } catch {
            throw CLIFailure(error, opening: directory)
        }
        print(
            "restored generation \(restored.id) (\(restored.kind.rawValue), chain \(restored.chain.map(String.init).joined(separator: "+"))) to \(destination)"
        )
    }
}
