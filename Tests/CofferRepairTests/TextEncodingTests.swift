import CofferTestSupport
import Foundation
import XCTest

@testable import CofferFormat
@testable import CofferRepair

/// UTF-16 databases: the schema is read and every TEXT value comes out as SQLite itself returns it as UTF-8.
final class TextEncodingTests: XCTestCase {
    private let texts = ["hello", "héllo wörld ✓", "😀 emoji", "", "日本語のテキスト"]

    func testUTF16DatabasesKeepTheirSchemaAndText() throws {
        for encoding in ["UTF-16le", "UTF-16be"] {
            let dir = try TemporaryDirectory()
            let path = dir.path("u16.db")
            let values = texts.map { "('\($0)')" }.joined(separator: ", ")
            _ = try Shell.run(
                "sqlite3", path,
                "PRAGMA encoding='\(encoding)'; CREATE TABLE \"tëxt\"(a INTEGER PRIMARY KEY, b TEXT); INSERT INTO \"tëxt\"(b) VALUES \(values);"
            )
            var sink = CollectingSink()
            let report = try Salvager(file: try DatabaseFile(path: path, key: .none)).run(into: &sink)
            XCTAssertEqual(report.textEncoding, encoding == "UTF-16le" ? 2 : 3)
            XCTAssertEqual(sink.tables.map(\.name), ["tëxt"], encoding)
            let salvaged = (sink.rows["tëxt"] ?? []).map { row -> String in
                guard case .text(let bytes)? = row.values.last else { return "not text" }
                return String(decoding: bytes, as: UTF8.self)
            }
            XCTAssertEqual(salvaged, texts, encoding)
        }
    }

    func testConversionMatchesSQLiteOnLoneSurrogatesAndOddLengths() throws {
        // What the sqlcipher shell (SQLite 3.15) prints — sqlite3_column_text, UTF-8 — for these UTF-16LE
        // byte strings (a CAST of a BLOB to TEXT in a UTF-16le database keeps its bytes as the text).
        let cases: [[UInt8]] = [
            [0x41, 0x00, 0x00, 0xD8], [0x00, 0xDC, 0x41, 0x00], [0x3D, 0xD8, 0x00, 0xDE], [0x41, 0x00, 0x42],
        ]
        let dir = try TemporaryDirectory()
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02X", $0) }.joined() }
        let sql =
            "PRAGMA encoding='UTF-16le'; CREATE TABLE t(x);\n"
            + cases.map { "SELECT CAST(x'\(hex($0))' AS TEXT);" }.joined(separator: "\n") + "\n"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlcipher")
        process.arguments = [dir.path("probe.db")]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(sql.utf8))
        try input.fileHandleForWriting.close()
        let printed = [UInt8](output.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        let lines = printed.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast().map(Array.init)
        XCTAssertEqual(lines.map(hex), cases.map { hex(TextEncoding.utf8(fromUTF16: $0, bigEndian: false)) })
    }
}
