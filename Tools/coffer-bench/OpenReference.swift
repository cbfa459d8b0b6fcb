import COpenSSL
import Foundation

/// W0's references for Coffer's first open (issue #43: "the derivation should cost what OpenSSL's
/// PBKDF2-HMAC-SHA512 costs, nothing more", and no more than SQLCipher 4.12's own first open), printed to
/// standard error beside W0's lines:
///
/// - OpenSSL's `PKCS5_PBKDF2_HMAC` with SHA-512 over 256,000 rounds, the derivation Coffer's default file
///   takes, called from here;
/// - SQLCipher 4.12's first open of its own default file (PBKDF2-HMAC-SHA512 256,000) and one `count(*)`,
///   timed inside Python with the `sqlcipher3` package from PyPI (`pip install sqlcipher3-binary`), when
///   `python3` has it; the interpreter's start is not counted.
///
/// Medians of `repetitions`.
enum OpenReference {
    static func report(repetitions: Int) {
        var times: [Double] = []
        var key = [UInt8](repeating: 0, count: 32)
        let salt = [UInt8](repeating: 7, count: 16)
        for _ in 0..<max(1, repetitions) {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = PKCS5_PBKDF2_HMAC("benchmark passphrase", 20, salt, 16, 256_000, EVP_sha512(), 32, &key)
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        var line = String(format: "W0 reference: OpenSSL PKCS5_PBKDF2_HMAC-SHA512 x256000 %.1f ms", median(times))
        if let sqlcipher = sqlcipher412FirstOpen(repetitions: repetitions) {
            line += String(format: "; SQLCipher 4.12 (sqlcipher3) first open %.1f ms", sqlcipher)
        } else {
            line += "; SQLCipher 4.12 first open not measured (python3 has no sqlcipher3)"
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Milliseconds, or nil when `python3 -c 'import sqlcipher3'` fails.
    private static func sqlcipher412FirstOpen(repetitions: Int) -> Double? {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-bench-w0-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = """
            import os, sys, time
            import sqlcipher3
            path = os.path.join(sys.argv[1], "reference.db")
            os.makedirs(sys.argv[1], exist_ok=True)
            c = sqlcipher3.connect(path); c.execute("PRAGMA key = 'benchmark passphrase'")
            c.execute("CREATE TABLE t(x)"); c.execute("INSERT INTO t VALUES (1)"); c.commit(); c.close()
            times = []
            for _ in range(int(sys.argv[2])):
                start = time.perf_counter()
                c = sqlcipher3.connect(path); c.execute("PRAGMA key = 'benchmark passphrase'")
                c.execute("SELECT count(*) FROM t").fetchone(); c.close()
                times.append((time.perf_counter() - start) * 1000)
            print(sorted(times)[len(times) // 2])
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, directory.path, String(max(1, repetitions))]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return Double(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
