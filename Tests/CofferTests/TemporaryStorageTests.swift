import CSQLCipher
import Coffer
import CofferTestSupport
import CofferVFS
import Foundation
import XCTest

/// `TemporaryStorage.encryptedFiles`: SQLite's temporary files hold only ciphertext, read back exactly,
/// and a sort that spills through them builds a whole index.
final class TemporaryStorageTests: XCTestCase {
    func testATemporaryFileHoldsCiphertextAndReadsBackExactly() throws {
        XCTAssertEqual(coffer_tempvfs_register(), SQLITE_OK)
        let vfs = try XCTUnwrap(sqlite3_vfs_find(COFFER_TEMP_VFS_NAME))
        let open = try XCTUnwrap(vfs.pointee.xOpen)
        let directory = try TemporaryDirectory()
        let path = directory.path("sort-run")
        let storage = UnsafeMutableRawPointer.allocate(byteCount: Int(vfs.pointee.szOsFile), alignment: 16)
        defer { storage.deallocate() }
        let file = storage.bindMemory(to: sqlite3_file.self, capacity: 1)
        var openedFlags: Int32 = 0
        let flags = SQLITE_OPEN_TEMP_JOURNAL | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        XCTAssertEqual(open(vfs, path, file, flags, &openedFlags), SQLITE_OK)
        let methods = try XCTUnwrap(file.pointee.pMethods).pointee
        let write = try XCTUnwrap(methods.xWrite)
        let read = try XCTUnwrap(methods.xRead)
        let close = try XCTUnwrap(methods.xClose)

        // Unaligned offsets on purpose: the key stream must line up with any byte of the file.
        let plaintext = Array(String(repeating: "secret row 42; ", count: 400).utf8)
        let start: Int64 = 7
        XCTAssertEqual(plaintext.withUnsafeBytes { write(file, $0.baseAddress, Int32($0.count), start) }, SQLITE_OK)
        let onDisk = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(onDisk.count, Int(start) + plaintext.count)
        XCTAssertNil(onDisk.range(of: Data("secret row".utf8)), "plaintext reached the disk")

        var slice = [UInt8](repeating: 0, count: 1000)
        XCTAssertEqual(slice.withUnsafeMutableBytes { read(file, $0.baseAddress, 1000, start + 1234) }, SQLITE_OK)
        XCTAssertEqual(slice, Array(plaintext[1234..<2234]))
        // The file keeps one keyed cipher context: each call restarts its stream at its own offset.
        for offset in [3, 1, 1234, 0] {
            var again = [UInt8](repeating: 0, count: 37)
            XCTAssertEqual(again.withUnsafeMutableBytes { read(file, $0.baseAddress, 37, start + Int64(offset)) }, SQLITE_OK)
            XCTAssertEqual(again, Array(plaintext[offset..<offset + 37]), "at \(offset)")
        }

        // Past the end: the bytes that exist decrypt, the rest read as zeros, as SQLite expects.
        var tail = [UInt8](repeating: 0xAA, count: 100)
        let tailOffset = start + Int64(plaintext.count) - 40
        let shortRead = SQLITE_IOERR | (2 << 8)  // SQLITE_IOERR_SHORT_READ (a macro Swift does not import)
        XCTAssertEqual(tail.withUnsafeMutableBytes { read(file, $0.baseAddress, 100, tailOffset) }, shortRead)
        XCTAssertEqual(Array(tail[..<40]), Array(plaintext.suffix(40)))
        XCTAssertEqual(Array(tail[40...]), [UInt8](repeating: 0, count: 60))
        XCTAssertEqual(close(file), SQLITE_OK)
    }

    func testAnIndexSortedThroughEncryptedTemporaryFilesIsWhole() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("sorted.db")
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.temporaryStorage = .encryptedFiles
        // A 64 KiB cache: the sort below (about 1.3 MB of keys) spills runs to temporary files.
        configuration.cacheSizeKiB = 64
        var generator = SeededGenerator(seed: 11)
        let bodies = (0..<20_000).map { _ in
            (0..<24).map { _ in String(UInt8.random(in: 0...255, using: &generator), radix: 16) }.joined()
        }
        let database = try Database(path: path, configuration: configuration)
        try database.write { db in
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "PRAGMA temp_store"), 1)
            try db.execute(sql: "CREATE TABLE message(id INTEGER PRIMARY KEY, body TEXT)")
            for body in bodies { try db.execute(sql: "INSERT INTO message(body) VALUES (?)", arguments: [body]) }
            try db.execute(sql: "CREATE INDEX message_body ON message(body)")
        }
        let sorted = try database.read { db in
            try db.fetchAll(sql: "SELECT body FROM message INDEXED BY message_body ORDER BY body").map {
                try $0.decode(String.self, at: 0)
            }
        }
        XCTAssertEqual(sorted, bodies.sorted())
        try database.close()
        let check = try Shell.sqlcipher(
            path, passphrase: ShellRawKey.spec(passphrase: "pw", path: path), "PRAGMA integrity_check;")
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertEqual(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "ok")
    }
}
