import Foundation

/// Runs external programs (the `sqlcipher` and `sqlite3` shells, the `coffer` CLI) as real processes.
public enum Shell {
    /// What a finished process printed and returned.
    public struct Result: Sendable {
        /// Exit status.
        public let status: Int32
        /// Standard output.
        public let stdout: String
        /// Standard error.
        public let stderr: String
    }

    /// Runs `executable` with `arguments`, feeding `input` on standard input.
    public static func run(
        _ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe()
        let err = Pipe()
        let inPipe = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inPipe
        try process.run()
        if let input { inPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try inPipe.fileHandleForWriting.close()
        // Read both pipes before waiting so a chatty child cannot block on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs SQL in the `sqlcipher` shell against `database`, keyed with `passphrase` and `pageSize`
    /// when a passphrase is given. The SQL is fed on standard input, so no key shows in `ps`.
    public static func sqlcipher(
        _ database: String, passphrase: String?, pageSize: Int = 4096, _ sql: String
    ) throws -> Result {
        var script = ""
        if let passphrase {
            script += "PRAGMA key = '\(passphrase.replacingOccurrences(of: "'", with: "''"))';\n"
            script += "PRAGMA cipher_page_size = \(pageSize);\n"
        }
        script += sql + "\n"
        return try run("/usr/bin/sqlcipher", ["-batch", database], input: script)
    }

    /// Runs `tool` (`sqlcipher` or `sqlite3` in /usr/bin) on `database` with `sql` on standard input,
    /// stopping at the first error; returns standard output and throws when the shell fails.
    @discardableResult
    public static func run(_ tool: String, _ database: String, _ sql: String) throws -> String {
        let result = try run("/usr/bin/\(tool)", ["-batch", "-bail", database], input: sql)
        guard result.status == 0 else { throw Failure(tool: tool, result: result) }
        return result.stdout
    }

    /// Writes an encrypted database with the `sqlcipher` shell: `sql` after `PRAGMA key` and
    /// `cipher_page_size`, stopping at the first error; throws when the shell fails.
    public static func sqlcipher(_ database: String, key: String = "pw", pageSize: Int = 4096, _ sql: String) throws {
        let result = try sqlcipher(database, passphrase: key, pageSize: pageSize, ".bail on\n" + sql)
        guard result.status == 0 else { throw Failure(tool: "sqlcipher", result: result) }
    }

    /// Writes `database` with Python: `sql` run by `executescript` on a connection of `module` (`sqlite3`, or
    /// `sqlcipher3` for SQLCipher 4.12 from PyPI, keyed with `key` first), fed on standard input; throws when
    /// Python fails. An independent producer of test files.
    public static func python(_ database: String, module: String = "sqlite3", key: String? = nil, _ sql: String) throws {
        let script = """
            import sys, \(module)
            db = \(module).connect(sys.argv[1], isolation_level=None)
            if len(sys.argv) > 2: db.execute("PRAGMA key = '%s'" % sys.argv[2].replace("'", "''"))
            db.executescript(sys.stdin.read())
            db.close()
            """
        let result = try run("/usr/bin/env", ["python3", "-c", script, database] + (key.map { [$0] } ?? []), input: sql)
        guard result.status == 0 else { throw Failure(tool: "python3 (\(module))", result: result) }
    }

    /// A shell that exited with an error.
    public struct Failure: Error, CustomStringConvertible {
        /// The shell's name.
        public let tool: String
        /// What it printed and returned.
        public let result: Result
        /// The shell, its exit status and its standard error.
        public var description: String { "\(tool) exited \(result.status): \(result.stderr)" }
    }

    /// The `coffer` executable built beside the test bundle.
    public static var cofferExecutable: String {
        productsDirectory.appendingPathComponent("coffer").path
    }

    /// The crash tests' child process, `coffer-torture` (a test-only executable), built beside the test bundle.
    public static var tortureExecutable: String {
        productsDirectory.appendingPathComponent("coffer-torture").path
    }

    /// The build products directory (where SwiftPM puts executables and the test bundle).
    public static var productsDirectory: URL {
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL
    }
}
