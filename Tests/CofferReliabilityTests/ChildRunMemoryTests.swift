import CofferTestSupport
import Foundation
import XCTest

/// `ChildRun` reports a child's own peak memory, not the test process's: on Linux a spawned child's
/// `ru_maxrss` also counts the peak of the address space it left at `exec`, its parent's.
final class ChildRunMemoryTests: XCTestCase {
    func testAChildsPeakMemoryExcludesTheTestProcesses() throws {
        let dir = try TemporaryDirectory()
        // Make this process's resident peak at least 200 MB (it stays the peak for the rest of the run).
        let size = 200 << 20
        let ballast = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 4096)
        defer { ballast.deallocate() }
        for offset in stride(from: 0, to: size, by: 4096) { ballast[offset] = 1 }
        let run = try ChildRun.run(Shell.cofferExecutable, ["--help"], in: dir.url.path)
        XCTAssertEqual(run.exitStatus, 0, run.stderr)
        XCTAssertLessThan(run.maxRSSKilobytes / 1024, 100, run.summary)
        XCTAssertGreaterThan(run.maxRSSKilobytes / 1024, 1, run.summary)
    }

    func testSignalsAndExitStatusPassThrough() throws {
        let dir = try TemporaryDirectory()
        XCTAssertEqual(try ChildRun.run("/bin/sh", ["-c", "exit 7"], in: dir.url.path).exitStatus, 7)
        let killed = try ChildRun.run("/bin/sh", ["-c", "kill -9 $$"], in: dir.url.path)
        XCTAssertEqual(killed.signal, 9, killed.summary)
        XCTAssertNil(killed.exitStatus)
    }
}
