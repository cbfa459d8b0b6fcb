import Foundation

/// A `sqlite3` or `sqlcipher` shell kept running in its own process and fed statements one at a time,
/// for tests that need another process to hold a lock while they act.
///
/// ```swift
/// let holder = try ShellSession("sqlite3", path)
/// try holder.send("BEGIN EXCLUSIVE; SELECT 'locked';")
/// try holder.waitForLine("locked")      // the other process now holds the lock
/// …
/// try holder.send("COMMIT;")
/// try holder.finish()
/// ```
public final class ShellSession: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lock = NSLock()
    private var pending = Data()

    /// Starts `/usr/bin/<tool> -batch -bail database`; it exits at the first failing statement.
    public init(_ tool: String, _ database: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/\(tool)")
        process.arguments = ["-batch", "-bail", database]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// The shell's process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// Writes `sql` and a newline to the shell's standard input.
    public func send(_ sql: String) throws {
        try lock.withLock { try input.fileHandleForWriting.write(contentsOf: Data((sql + "\n").utf8)) }
    }

    /// Blocks until the shell prints a line equal to `line`; throws if it exits first.
    public func waitForLine(_ line: String) throws {
        let wanted = Data((line + "\n").utf8)
        while true {
            if let range = pending.range(of: wanted), range.lowerBound == 0 || pending[range.lowerBound - 1] == 0x0A {
                pending.removeSubrange(..<range.upperBound)
                return
            }
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw Shell.Failure(tool: "shell session", result: exitResult()) }
            pending.append(chunk)
        }
    }

    /// Closes standard input and waits for the shell to exit; throws when it exits with an error.
    public func finish() throws {
        try lock.withLock { try input.fileHandleForWriting.close() }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Shell.Failure(tool: "shell session", result: exitResult()) }
    }

    private func exitResult() -> Shell.Result {
        process.waitUntilExit()
        return Shell.Result(status: process.terminationStatus, stdout: String(decoding: pending, as: UTF8.self), stderr: "")
    }
}
