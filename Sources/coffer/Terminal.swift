import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Terminal helpers: a no-echo prompt and a one-line progress display on standard error.
enum Terminal {
    /// True when standard error is a terminal (progress bars are drawn only then).
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// The passphrase read by ``passphrase()``, kept for the rest of the process.
    private static let asked = SecretOnce()

    /// The passphrase, asked on the terminal the first time and remembered after: a command reads its key
    /// in several places (profile detection, OUTPUT's key, a retry with another salt) and asks only once.
    static func passphrase() -> String? {
        asked.value { readSecret(prompt: "Passphrase: ") }
    }

    /// Reads a line from the terminal with echo off; nil when standard input is not a terminal.
    static func readSecret(prompt: String) -> String? {
        guard isatty(STDIN_FILENO) != 0 else { return nil }
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        // Echo off (flushing what was typed before) first, then the prompt: an answer typed as soon as the
        // prompt shows is never flushed away.
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        FileHandle.standardError.write(Data(prompt.utf8))
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return readLine(strippingNewline: true)
    }
}

/// A value computed at most once per process, under a lock.
private final class SecretOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var answer: String??

    func value(_ read: () -> String?) -> String? {
        lock.withLock {
            if let answer { return answer }
            let read = read()
            answer = .some(read)
            return read
        }
    }
}
