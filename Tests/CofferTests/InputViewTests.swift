import CofferEngine
import CofferTestSupport
import Foundation
import XCTest

/// `InputCopy.withView`, which decides whether `verify` reads its input in place (immutable) or on a
/// private copy: in place only with no side file beside it, and again on a copy when the file changed while
/// it was read in place.
final class InputViewTests: XCTestCase {
    private func makeFile(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.path("input.db")
        try Shell.run("sqlite3", path, "CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        return path
    }

    func testAFileAloneIsReadInPlace() throws {
        let dir = try TemporaryDirectory()
        let path = try makeFile(dir)
        var calls: [(String, Bool)] = []
        let answer = try InputCopy.withView(path) { view, immutable in
            calls.append((view, immutable))
            return 7
        }
        XCTAssertEqual(answer, 7)
        XCTAssertEqual(calls.map(\.0), [path])
        XCTAssertEqual(calls.map(\.1), [true])
    }

    func testASideFileMeansACopy() throws {
        for suffix in ["-wal", "-journal", "-shm"] {
            let dir = try TemporaryDirectory()
            let path = try makeFile(dir)
            _ = FileManager.default.createFile(atPath: path + suffix, contents: Data())
            var calls: [(String, Bool)] = []
            try InputCopy.withView(path) { view, immutable in calls.append((view, immutable)) }
            XCTAssertEqual(calls.count, 1, suffix)
            XCTAssertEqual(calls.first?.1, false, suffix)
            XCTAssertNotEqual(calls.first?.0, path, suffix)
        }
    }

    func testAFileChangedWhileReadInPlaceIsReadAgainFromACopy() throws {
        let dir = try TemporaryDirectory()
        let path = try makeFile(dir)
        var calls: [(String, Bool)] = []
        let answer = try InputCopy.withView(path) { view, immutable -> String in
            calls.append((view, immutable))
            if immutable {
                // Another process writes the file meanwhile: its size and modification time change.
                let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data(repeating: 0, count: 4096))
                try handle.close()
                return "in place"
            }
            return "copy"
        }
        XCTAssertEqual(answer, "copy")
        XCTAssertEqual(calls.map(\.1), [true, false])
        XCTAssertNotEqual(calls.last?.0, path)
    }

    func testAnErrorOrARefusedAnswerInPlaceIsAnsweredByACopy() throws {
        let dir = try TemporaryDirectory()
        let path = try makeFile(dir)
        struct InPlaceFailure: Error {}
        var calls: [Bool] = []
        let answer = try InputCopy.withView(path) { _, immutable -> Int in
            calls.append(immutable)
            if immutable { throw InPlaceFailure() }
            return 2
        }
        XCTAssertEqual(answer, 2)
        XCTAssertEqual(calls, [true, false])

        calls = []
        let confirmed = try InputCopy.withView(path, acceptsInPlace: { $0.isEmpty }) { _, immutable -> [String] in
            calls.append(immutable)
            return immutable ? ["problem seen in place"] : []
        }
        XCTAssertEqual(confirmed, [])
        XCTAssertEqual(calls, [true, false])
    }

    func testAWALCreatedWhileReadInPlaceMeansACopy() throws {
        let dir = try TemporaryDirectory()
        let path = try makeFile(dir)
        var calls: [Bool] = []
        try InputCopy.withView(path) { _, immutable in
            calls.append(immutable)
            if immutable { _ = FileManager.default.createFile(atPath: path + "-wal", contents: Data()) }
        }
        XCTAssertEqual(calls, [true, false])
    }
}
