import ArgumentParser
import Coffer
import Foundation

/// `coffer demo`: the tour a newcomer runs first. Creates an encrypted database, writes and reads
/// concurrently, and shows what Coffer guarantees, in a few lines.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Create an encrypted database, write and read it concurrently, and show what Coffer guarantees.")

    @Option(help: "Directory for the demo files (default: a new temporary directory).")
    var dir: String?

    func run() throws {
        let directory = try dir.map { URL(fileURLWithPath: $0) } ?? Self.makeTemporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("demo.db").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let passphrase = "demo passphrase — change me"
        let marker = "COFFER-DEMO-SECRET"

        print("Coffer demo in \(directory.path)")
        var start = Date()
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase(passphrase)))
        print("1. Created encrypted \(path) (PBKDF2 key derivation, once: \(Self.ms(since: start)))")

        try database.write { db in
            try db.execute(sql: "CREATE TABLE account(id INTEGER PRIMARY KEY, owner TEXT NOT NULL, balance INTEGER NOT NULL)")
            for owner in 0..<100 {
                try db.execute(
                    sql: "INSERT INTO account(owner, balance) VALUES (?, 1000)", arguments: ["\(marker) owner \(owner)"])
            }
        }

        // One writer moves money between accounts while four readers check that every snapshot they
        // see still adds up to the same total.
        start = Date()
        let transfers = 2000
        let readersDone = ReaderTally()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            var generator = SystemRandomNumberGenerator()
            for _ in 0..<transfers {
                let from = Int.random(in: 1...100, using: &generator)
                let to = Int.random(in: 1...100, using: &generator)
                try? database.write { db in
                    try db.execute(sql: "UPDATE account SET balance = balance - 7 WHERE id = ?", arguments: [from])
                    try db.execute(sql: "UPDATE account SET balance = balance + 7 WHERE id = ?", arguments: [to])
                }
            }
            readersDone.finishWriting()
        }
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                while !readersDone.writingFinished {
                    let total = try? database.read { db in try db.fetchValue(Int.self, sql: "SELECT sum(balance) FROM account") }
                    readersDone.record(consistent: total == 100_000)
                }
            }
        }
        group.wait()
        print(
            "2. \(transfers) write transactions while 4 readers took \(readersDone.reads) snapshots in \(Self.ms(since: start)): "
                + "\(readersDone.inconsistent == 0 ? "every snapshot consistent" : "\(readersDone.inconsistent) INCONSISTENT snapshots")"
        )

        try database.close()
        let bytes = ["", "-wal", "-shm"].compactMap { FileManager.default.contents(atPath: path + $0) }
        let leaked = bytes.contains { $0.range(of: Data(marker.utf8)) != nil }
        print(
            "3. Scanned every byte of the database files for the rows' text: \(leaked ? "FOUND — plaintext on disk!" : "not found, the file is encrypted")"
        )

        do {
            _ = try Database(path: path, configuration: Configuration(encryption: .passphrase("not the passphrase")))
            print("4. A wrong passphrase opened the database — this is a bug")
        } catch CofferError.wrongPassphrase {
            print("4. A wrong passphrase is refused at open with CofferError.wrongPassphrase; the file is untouched")
        }

        start = Date()
        let reopened = try Database(path: path, configuration: Configuration(encryption: .passphrase(passphrase)))
        let firstOpen = Self.ms(since: start)
        start = Date()
        let total = try reopened.read { db in try db.fetchValue(Int.self, sql: "SELECT sum(balance) FROM account") }
        print(
            "5. Reopened (\(firstOpen)); a reader connection opened with the derived key and read total \(total ?? 0) in \(Self.ms(since: start))"
        )
        print(InfoCommand.text(for: try reopened.info()).split(separator: "\n").map { "   " + $0 }.joined(separator: "\n"))
        try reopened.close()
        if readersDone.inconsistent > 0 || leaked {
            throw CLIFailure(status: .failure, message: "the demo found a problem")
        }
    }

    static func ms(since start: Date) -> String {
        String(format: "%.1f ms", Date().timeIntervalSince(start) * 1000)
    }

    static func makeTemporaryDirectory() throws -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("coffer-demo-\(UUID().uuidString.prefix(8))")
    }
}

/// Counts the demo readers' snapshots across threads.
private final class ReaderTally: @unchecked Sendable {
    private let lock = NSLock()
    private var finished = false
    private(set) var reads = 0
    private(set) var inconsistent = 0

    var writingFinished: Bool { lock.withLock { finished } }
    func finishWriting() { lock.withLock { finished = true } }
    func record(consistent: Bool) {
        lock.withLock {
            reads += 1
            if !consistent { inconsistent += 1 }
        }
    }
}
