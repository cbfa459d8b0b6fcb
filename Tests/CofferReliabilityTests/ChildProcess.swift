import CofferTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program as a child and reports how it ended and what it cost: exit status or signal, wall time,
/// and peak resident memory, so resource bounds can be asserted, not guessed.
///
/// The memory figure is the program's own. Linux adds to a process's `ru_maxrss` the peak of the address
/// space it replaced at `exec`, and a child spawned straight from the test process starts in (a copy of)
/// the test process's: its `ru_maxrss` would be at least the whole test bundle's peak, which grows with
/// the tests run before and with instrumentation (a coverage run crossed 150 MB while `coffer` itself used
/// 32 MB). So the program is started by a small Python process that forks and waits for it, and reports
/// the `ru_maxrss` of that grandchild, whose replaced address space was Python's (about 10 MB).
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
        // Outside `directory`, whose contents some tests check.
        let rssPath = FileManager.default.temporaryDirectory.appendingPathComponent("child-maxrss-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: rssPath) }
        var program = measurer
        var argv = [measurer, "-c", measuringScript, rssPath, executable] + arguments
        if !limits.isEmpty {
            program = "/bin/sh"
            argv =
                ["/bin/sh", "-c", "ulimit " + limits.joined(separator: " ") + " && exec \"$0\" \"$@\""] + argv
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
            maxRSSKilobytes: (try? String(contentsOfFile: rssPath, encoding: .utf8)).flatMap { Int($0) } ?? usage.ru_maxrss)
    }

    private static let measurer = "/usr/bin/python3"

    /// `python3 -c SCRIPT RSS-FILE PROGRAM ARGS…`: runs PROGRAM in a forked child (with SIGPIPE and SIGXFSZ,
    /// which Python ignores, back to their defaults), writes the child's `ru_maxrss` to RSS-FILE and ends
    /// the way the child ended.
    private static let measuringScript = """
        import os, signal, sys
        pid = os.fork()
        if pid == 0:
            for number in (signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(number, signal.SIG_DFL)
            os.execv(sys.argv[2], sys.argv[2:])
        _, status, usage = os.wait4(pid, 0)
        with open(sys.argv[1], "w") as out:
            out.write(str(usage.ru_maxrss))
        if os.WIFSIGNALED(status):
            if os.WTERMSIG(status) not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
            os.kill(os.getpid(), os.WTERMSIG(status))
        os._exit(os.WEXITSTATUS(status))
        """

    static func coffer(_ arguments: [String], in directory: String, ulimit limits: [String] = []) throws -> ChildRun {
        try run(Shell.cofferExecutable, arguments, in: directory, ulimit: limits)
    }
}
