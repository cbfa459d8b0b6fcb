import CofferTestSupport
import XCTest

@testable import CofferRepair

final class PageDecoderFormatTests: XCTestCase {
    func testDecodesPagesWrittenByTheShell() throws {
        for pageSize in [4096, 1024] {
            let dir = try TemporaryDirectory()
            let path = dir.path("p\(pageSize).db")
            try Shell.sqlcipher(path, pageSize: pageSize, "CREATE TABLE t(a INTEGER, b TEXT); INSERT INTO t VALUES(1,'x');")
            let file = try DatabaseFile(path: path, key: .passphrase("pw"))
            XCTAssertEqual(file.pageSize, pageSize)
            XCTAssertEqual(file.usableSize, pageSize - 48)
            XCTAssertFalse(file.pageOneDamaged)
            let page1 = try file.page(1).get()
            XCTAssertEqual(Array(page1.prefix(16)), Array("SQLite format 3".utf8) + [0])
            let view = ByteView(page1)
            XCTAssertEqual(view.u16(16).map(Int.init), pageSize == 65536 ? 1 : pageSize)
            XCTAssertEqual(view.u8(20), 48)
            let page2 = try file.page(2).get()
            XCTAssertEqual(page2.first, 0x0d, "table t's root is a table leaf")
        }
    }
}
