import CofferTestSupport
import Foundation
import XCTest

/// `--prompt` asks for the passphrase once in every command, on a real pseudo-terminal (python's `pty`
/// drives the binary, answering each prompt and counting them).
final class PromptOnceTests: XCTestCase {
    private static let driver = """
        import os, pty, signal, sys
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(sys.argv[1], sys.argv[1:])
        signal.signal(signal.SIGALRM, lambda *_: os.kill(pid, signal.SIGKILL))
        signal.alarm(60)
        out, answered = b'', 0
        while True:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            out += data
            while out.count(b'Passphrase:') > answered:
                os.write(fd, b'pw\\n')
                answered += 1
        _, status = os.waitpid(pid, 0)
        print('prompts=%d exit=%d' % (answered, os.waitstatus_to_exitcode(status)))
        sys.stderr.write(out.decode('utf-8', 'replace'))
        """

    func testEveryCommandAsksOnce() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.db")
        try Shell.sqlcipher(path, key: "pw", "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3);")
        let commands: [[String]] = [
            ["info", path, "--prompt"],
            ["verify", path, "--prompt"],
            ["repair", path, "-o", dir.path("repaired.db"), "--prompt"],
            ["migrate", path, "-o", dir.path("migrated.db"), "--prompt"],
            ["backup", path, "--to", dir.path("backups"), "--prompt"],
        ]
        for command in commands {
            let result = try Shell.run("/usr/bin/env", ["python3", "-c", Self.driver, Shell.cofferExecutable] + command)
            XCTAssertEqual(
                result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "prompts=1 exit=0",
                "coffer \(command[0]): \(result.stderr)")
        }
    }
}
