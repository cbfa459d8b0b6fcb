import CSQLCipher
import Coffer
import Foundation

/// S1 (the size axis, issue 43 item 4): what the file-level operations cost on W1–W6's table at the
/// run's size (`--rows`, or `--scale N` for N × 100,000 rows), encrypted (`coffer`) or not
/// (`coffer-plain`). The file is filled once through Coffer and closed (WAL checkpointed), untimed.
///
/// - `S1-verify`, `S1-stats`, `S1-repair`: the `coffer` command line tool built beside coffer-bench
///   (`swift build -c release --product coffer`), run as an operator runs it, end to end in a child
///   process: `coffer verify`, `coffer stats`, `coffer repair -o OUT`. ops/s is MB (10⁶ bytes) of the
///   file per second; the peak RSS is the tool's own (GNU `time`'s `%M`), the largest of the repetitions.
///   `S1-verify` for `raw-c` and `raw-c-plain` is the floor `coffer verify` stands on: `PRAGMA
///   integrity_check` through the C API in this process, on a connection opened with the same page cache on
///   a file filled the same way (SQLCipher 3's derivation for `raw-c`, as every raw C line), timed from the open.
/// - `S1-verify-quick`: `coffer verify --quick` (`PRAGMA quick_check`, which does not match index entries to
///   rows), and for `raw-c` and `raw-c-plain` that pragma through the C API the same way.
/// - `S1-backup-1k`, `S1-backup-all`: an incremental backup (`Database.backup(to:kind: .incremental)`)
///   after changing about 1,000 of the table's pages (one row in every `rows / 1,000`), or every row;
///   ops/s is pages stored per second (the generation's `storedPageCount`), so a cost proportional
///   to the changed pages reads the same at every size. A full backup before, untimed, is the base.
struct ScaleWorkloads {
    let harness: Harness
    let writes: WriteWorkloads

    func run(_ impl: Implementation) throws -> [Measurement] {
        if impl.isRaw {
            let path = try writes.prepareDatabase(impl, rows: writes.rowCount)
            defer { try? FileManager.default.removeItem(atPath: path) }
            return try [("S1-verify", "integrity_check"), ("S1-verify-quick", "quick_check")].map {
                try rawCheck(impl, path, $0, $1)
            }
        }
        guard impl == .coffer || impl == .cofferPlain else { return [] }
        let path = try writes.prepareDatabase(impl, rows: writes.rowCount)
        let bytes = Double(try Self.fileSize(path))
        let tool = try Self.commandLineTool()
        var environment: [String: String] = [:]
        var keyArguments: [String] = []
        if impl.isEncrypted {
            environment["COFFER_BENCH_PASSPHRASE"] = WriteWorkloads.passphrase
            keyArguments = ["--passphrase-env", "COFFER_BENCH_PASSPHRASE"]
        }
        var results: [Measurement] = []
        for (name, arguments) in [
            ("S1-verify", ["verify", path]), ("S1-verify-quick", ["verify", "--quick", path]), ("S1-stats", ["stats", path]),
        ] {
            results.append(
                try childMeasurement(name, impl, bytes: bytes) { _ in
                    try Self.runChild(tool, arguments + keyArguments, environment)
                })
        }
        results.append(
            try childMeasurement("S1-repair", impl, bytes: bytes) { repetition in
                let output = harness.freshPath("s1-repaired-\(repetition)")
                defer { try? FileManager.default.removeItem(atPath: output) }
                return try Self.runChild(tool, ["repair", path, "--output", output] + keyArguments, environment)
            })
        results += try backups(path, impl)
        FileHandle.standardError.write(
            Data("S1 \(impl.rawValue): \(writes.rowCount) rows, file \(String(format: "%.1f", bytes / 1e6)) MB\n".utf8))
        return results
    }

    /// `S1-verify`'s (`S1-verify-quick`'s) raw C floor on the filled file at `path`: open, then `PRAGMA
    /// integrity_check` (`quick_check`), which must say `ok`.
    private func rawCheck(_ impl: Implementation, _ path: String, _ workload: String, _ pragma: String) throws -> Measurement {
        let bytes = Double(try Self.fileSize(path))
        let seconds = try harness.median(setUp: {}) { _ in
            let connection = try RawConnection(path: path, key: impl.rawKey, readOnly: true, cacheKiB: harness.cacheKiB)
            let statement = try connection.prepare("PRAGMA \(pragma)")
            defer { sqlite3_finalize(statement) }
            try connection.step(statement, expecting: SQLITE_ROW)
            guard let text = sqlite3_column_text(statement, 0), String(cString: text) == "ok" else {
                throw BenchError("\(workload) \(impl.rawValue): \(pragma) did not say ok")
            }
        }
        return Measurement(workload: workload, impl: impl.rawValue, opsPerSecond: bytes / 1e6 / seconds, seconds: seconds)
    }

    /// The median over the repetitions of a child process's time, with the largest peak RSS among them.
    private func childMeasurement(
        _ workload: String, _ impl: Implementation, bytes: Double, _ body: (Int) throws -> (seconds: Double, peakKiB: Int)
    ) throws -> Measurement {
        var times: [Double] = []
        var peak = 0
        for repetition in 0..<harness.repetitions {
            let (seconds, peakKiB) = try body(repetition)
            times.append(seconds)
            peak = max(peak, peakKiB)
        }
        let seconds = median(times)
        var measurement = Measurement(
            workload: workload, impl: impl.rawValue, opsPerSecond: bytes / 1e6 / seconds, seconds: seconds)
        measurement.peakRSSKiB = peak
        return measurement
    }

    /// The two incremental backups, each repetition on the same database and backup directory.
    private func backups(_ path: String, _ impl: Implementation) throws -> [Measurement] {
        let database = try Database(path: path, configuration: harness.configuration(impl))
        defer { try? database.close() }
        let directory = URL(fileURLWithPath: harness.freshPath("s1-backups"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try database.backup(to: directory, kind: .full)
        let stride = max(1, writes.rowCount / 1_000)
        var results: [Measurement] = []
        for (name, sql) in [
            ("S1-backup-1k", "UPDATE person SET score = score + 1 WHERE id % \(stride) = 0"),
            ("S1-backup-all", "UPDATE person SET score = score + 1"),
        ] {
            var times: [Double] = []
            var pages: [Int] = []
            for _ in 0..<harness.repetitions {
                try database.write { db in try db.execute(sql: sql) }
                let start = DispatchTime.now().uptimeNanoseconds
                let generation = try database.backup(to: directory, kind: .incremental)
                times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                pages.append(generation.storedPageCount)
            }
            let seconds = median(times)
            let stored = median(pages.map(Double.init))
            FileHandle.standardError.write(
                Data(
                    "\(name) \(impl.rawValue): \(Int(stored)) pages stored, \(String(format: "%.2f", seconds * 1e6 / max(stored, 1))) µs a page\n"
                        .utf8))
            results.append(
                Measurement(workload: name, impl: impl.rawValue, opsPerSecond: stored / seconds, seconds: seconds))
        }
        return results
    }

    private static func fileSize(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The `coffer` executable beside this one.
    private static func commandLineTool() throws -> String {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let tool = directory.appendingPathComponent("coffer").path
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw BenchError(
                "S1 needs the coffer tool beside coffer-bench: swift build -c release --product coffer (same --scratch-path)")
        }
        return tool
    }

    /// Runs `tool` with `arguments` (its output discarded) and waits: wall time and the child's peak RSS.
    ///
    /// The peak comes from GNU `time` (`/usr/bin/time -f %M`), which forks the tool: a child spawned from
    /// this process directly (`posix_spawn`, as `Process` does) shares its memory until `exec`, and Linux
    /// carries that high-water mark into the child's `ru_maxrss`, so `wait4` here would report
    /// coffer-bench's own peak.
    private static func runChild(
        _ tool: String, _ arguments: [String], _ environment: [String: String]
    ) throws -> (seconds: Double, peakKiB: Int) {
        let timeTool = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: timeTool) else {
            throw BenchError("S1 needs GNU time (/usr/bin/time, Debian's `time` package) for the tools' peak RSS")
        }
        let report = NSTemporaryDirectory() + "coffer-bench-peak-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: report) }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: timeTool)
        child.arguments = ["-f", "%M", "-o", report, tool] + arguments
        child.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        child.standardOutput = FileHandle.nullDevice
        let start = DispatchTime.now().uptimeNanoseconds
        try child.run()
        child.waitUntilExit()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        // A normal exit with status 0 (the tool's "ran" code for verify, stats and repair).
        guard child.terminationReason == .exit, child.terminationStatus == 0 else {
            throw BenchError("\(tool) \(arguments.first ?? "") exited with status \(child.terminationStatus)")
        }
        let peak = (try? String(contentsOfFile: report, encoding: .utf8))?
            .split(whereSeparator: \.isNewline).last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard let peak else { throw BenchError("no peak RSS from \(timeTool) for \(tool)") }
        return (seconds, peak)
    }
}
