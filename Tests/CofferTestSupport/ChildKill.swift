import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a child process and SIGKILLs it at a moment its own output chooses: the crash tests' one loop
/// (`KillTests`, `VacuumKillTests`, `KeyValueCrashTests`).
///
/// ```swift
/// var acks = 0
/// let end = try ChildKill.run(executable: Shell.tortureExecutable, arguments: [path]) { line in
///     if line.hasPrefix("ack ") { acks += 1 }
///     return acks >= 10   // kill after the tenth acknowledged commit
/// }
/// XCTAssertTrue(end.killed)
/// ```
public enum ChildKill {
    /// How the child ended.
    public struct End: Sendable {
        /// Whether a signal ended it (the SIGKILL, unless it had exited first).
        public let killed: Bool
        /// Its exit status, or the signal's number when ``killed``.
        public let status: Int32
    }

    /// Starts `executable` with `arguments` and this process's environment plus `environment` (standard error
    /// discarded), hands every line of its standard output to `onLine` in order, and sends SIGKILL once, the
    /// first time `onLine` returns true. Reads the output to its end (lines after the kill still reach
    /// `onLine`) and waits for the child.
    ///
    /// The child writes no coverage profile (`LLVM_PROFILE_FILE=/dev/null`, unless `environment` names
    /// one): a SIGKILL that lands while an exiting child writes its profile leaves a truncated `.profraw`,
    /// and `swift test --enable-code-coverage` then fails to merge them all (seen once in CI, from
    /// `AppAndExtensionProcessTests`).
    public static func run(
        executable: String, arguments: [String], environment: [String: String] = [:], onLine: (String) -> Bool
    ) throws -> End {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment
            .merging(["LLVM_PROFILE_FILE": "/dev/null"]) { $1 }
            .merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var pending = Data()
        var sent = false
        while true {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                if onLine(line) && !sent {
                    kill(process.processIdentifier, SIGKILL)
                    sent = true
                }
            }
        }
        process.waitUntilExit()
        return End(killed: process.terminationReason == .uncaughtSignal, status: process.terminationStatus)
    }
}
