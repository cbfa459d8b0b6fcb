import CofferTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program as a child and reports how it ended and what it cost: exit status or signal, wall time,
/// and peak resident memory (from `wait4`'s rusage), so resource bounds can be asserted, not guessed.
struct ChildRun {
    /// The exit status, or `nil` when the child died from a signal.
    let exitStatus: Int32?
    /// The signal that ended the child, or `nil` when it exited.
    let signal: Int32?
    let stdout: String
    let stderr: String
    let seconds: Double
    /// Peak resident set size in kilobytes.
    let maxRSSKilobytes: Int

    var summary: String {
        "exit \(exitStatus.map(String.init) ?? "-") signal \(signal.map(String.init) ?? "-") "
            + String(format: "%.2fs %d MB", seconds, maxRSSKilobytes / 1024)
    }

    /// Runs `executable` with `arguments`, its output going to files under `directory`. `limits` are shell
    /// `ulimit` options applied in the child first (e.g. `["-f", "2048"]`); they need `/bin/sh`.
    static func run(_ executable: String, _ arguments: [String], in directory: String, ulimit limits: [String] = [])
        throws -> ChildRun
    {
        let outPath = directory + "/.child-stdout"
        let errPath = directory + "/.child-stderr"
        var program = executable
        var argv = [executable] + arguments
        if !limits.isEmpty {
            program = "/bin/sh"
            argv =
                ["/bin/sh", "-c", "ulimit " + limits.joined(separator: " ") + " && exec \"$0\" \"$@\"", executable]
                + arguments
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let started = Date()
        let spawned = posix_spawn(&pid, program, &actions, nil, cArgs, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw POSIXError(.ECHILD) }
        }
        let seconds = Date().timeIntervalSince(started)
        let signaled = (status & 0x7f) != 0 && (status & 0x7f) != 0x7f
        return ChildRun(
            exitStatus: signaled ? nil : (status >> 8) & 0xff,
            signal: signaled ? status & 0x7f : nil,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "",
            seconds: seconds,
            maxRSSKilobytes: usage.ru_maxrss)
    }

    static func coffer(_ arguments: [String], in directory: String, ulimit limits: [String] = []) throws -> ChildRun {
        try run(Shell.cofferExecutable, arguments, in: directory, ulimit: limits)
    }
}
