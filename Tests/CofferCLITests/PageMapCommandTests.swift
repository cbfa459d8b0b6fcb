import CofferTestSupport
import Foundation
import XCTest

#if canImport(FoundationXML)
import FoundationXML
#endif

/// `coffer verify --page-map` and `coffer repair --page-map`: the SVG parses, its counts agree with the
/// JSON reports and with `coffer stats`, it renders (when `rsvg-convert` is installed), and INPUT is never
/// written.
final class PageMapCommandTests: XCTestCase {
    /// What the SVG's `data-` attributes say: counts per group ("kind", "fate", "owner") and name, and the
    /// root element's page count.
    final class Counts: NSObject, XMLParserDelegate {
        var groups: [String: [String: Int]] = [:]
        var pages = 0
        var pagesPerCell = 0

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String]
        ) {
            if name == "svg" {
                pages = Int(attributes["data-pages"] ?? "") ?? -1
                pagesPerCell = Int(attributes["data-pages-per-cell"] ?? "") ?? -1
            }
            if let group = attributes["data-group"], let key = attributes["data-name"],
                let count = Int(attributes["data-count"] ?? "")
            {
                groups[group, default: [:]][key] = count
            }
        }

        func sum(_ group: String) -> Int { groups[group]?.values.reduce(0, +) ?? 0 }
        func fate(_ name: String) -> Int { groups["fate"]?[name] ?? 0 }
    }

    static func parse(_ path: String) throws -> Counts {
        let parser = try XCTUnwrap(XMLParser(contentsOf: URL(fileURLWithPath: path)))
        let counts = Counts()
        parser.delegate = counts
        XCTAssertTrue(parser.parse(), "\(path) is not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "")")
        return counts
    }

    private func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// Two tables and an index by the `sqlcipher` shell; `note`'s root (page 2) and one more page damaged.
    private func makeDamaged(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.path("input/app.db")
        try FileManager.default.createDirectory(atPath: dir.path("input"), withIntermediateDirectories: true)
        try Shell.sqlcipher(
            path,
            """
            CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT);
            CREATE TABLE blob(id INTEGER PRIMARY KEY, data BLOB);
            CREATE INDEX note_body ON note(body);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
            INSERT INTO note(body) SELECT printf('note %d %s', i, hex(randomblob(30))) FROM n;
            INSERT INTO blob(data) VALUES (randomblob(30000));
            DELETE FROM note WHERE id % 7 = 0;
            """)
        try "pw".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        for page in [2, 30] {
            try handle.seek(toOffset: UInt64((page - 1) * 4096 + 700))
            handle.write(Data(repeating: 0xA5, count: 16))
        }
        try handle.close()
        return path
    }

    private func snapshot(_ directory: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            result[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return result
    }

    func testVerifyAndRepairMapsMatchTheirReports() throws {
        let dir = try TemporaryDirectory()
        let input = try makeDamaged(dir)
        let key = ["--passphrase-file", dir.path("pw")]
        let before = try snapshot(dir.path("input"))

        let verify = try Shell.run(
            Shell.cofferExecutable, ["verify", input, "--json", "--page-map", dir.path("verify.svg")] + key)
        XCTAssertEqual(verify.status, 1, verify.stderr)
        let verified = try json(verify.stdout)
        let map = try Self.parse(dir.path("verify.svg"))
        XCTAssertEqual(map.pages, verified["pageCount"] as? Int)
        XCTAssertEqual(map.sum("kind"), map.pages)
        XCTAssertEqual(map.sum("fate"), map.pages)
        XCTAssertEqual(map.fate("hmacFailed"), (verified["damagedPages"] as? [Int])?.count)
        XCTAssertEqual(map.fate("hmacFailed"), 2)
        XCTAssertGreaterThan(map.fate("orphan"), 0, "note's leaves lost their root")
        XCTAssertEqual(map.fate("adopted"), 0, "verify adopts nothing")
        XCTAssertEqual(map.pagesPerCell, 1)

        let repair = try Shell.run(
            Shell.cofferExecutable,
            [
                "repair", input, "-o", dir.path("out.db"), "--report", dir.path("report.json"), "--page-map",
                dir.path("repair.svg"),
            ]
                + key)
        XCTAssertEqual(repair.status, 0, repair.stderr)
        let report = try json(
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: dir.path("report.json"))), as: UTF8.self))
        let repaired = try Self.parse(dir.path("repair.svg"))
        XCTAssertEqual(repaired.pages, report["pages_total"] as? Int)
        XCTAssertEqual(repaired.sum("fate"), repaired.pages)
        let adopted = (report["orphan_leaves_adopted"] as? Int ?? -1) + (report["orphan_leaves_inferred"] as? Int ?? -1)
        XCTAssertGreaterThan(adopted, 0)
        XCTAssertEqual(repaired.fate("adopted"), adopted)
        XCTAssertEqual(
            repaired.fate("hmacFailed") + repaired.fate("lost"),
            (report["pages_bad_hmac"] as? Int ?? -1) + (report["pages_zero"] as? Int ?? -1))
        XCTAssertEqual(repaired.fate("ok") + repaired.fate("orphan"), map.fate("ok") + map.fate("orphan") - adopted)
        XCTAssertEqual(try snapshot(dir.path("input")), before, "verify or repair changed INPUT's directory")
    }

    /// On an intact file every page of a table or index in the map is one `coffer stats` counts for it.
    func testOwnerCountsMatchStats() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("clean.db")
        try Shell.run(
            "sqlite3", path,
            """
            PRAGMA page_size=1024;
            CREATE TABLE a(x INTEGER PRIMARY KEY, y TEXT); CREATE INDEX a_y ON a(y);
            CREATE TABLE b(k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1500)
            INSERT INTO a(y) SELECT printf('%d-%s', i, hex(randomblob(8))) FROM n;
            INSERT INTO b VALUES ('big', randomblob(5000)), ('small', x'00');
            """)
        let verify = try Shell.run(Shell.cofferExecutable, ["verify", path, "--page-map", dir.path("map.svg")])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        let map = try Self.parse(dir.path("map.svg"))
        XCTAssertEqual(map.fate("ok"), map.pages)
        let stats = try json(try Shell.run(Shell.cofferExecutable, ["stats", path, "--json"]).stdout)
        let objects = try XCTUnwrap(stats["objects"] as? [[String: Any]])
        var expected: [String: Int] = [:]
        for object in objects { expected[object["name"] as? String ?? "?"] = object["pages"] as? Int }
        XCTAssertEqual(map.groups["owner"], expected)
        XCTAssertEqual(map.groups["kind"]?["overflow"], objects.map { $0["overflow_pages"] as? Int ?? 0 }.reduce(0, +))
    }

    /// A plaintext copy taken with committed frames in its WAL: those pages are taken from the WAL, and
    /// one damaged committed frame loses its page.
    func testPagesFromTheWALAndLostInIt() throws {
        let dir = try TemporaryDirectory()
        let live = dir.path("live.db")
        let input = dir.path("input.db")
        try Shell.run(
            "sqlite3", live,
            """
            PRAGMA page_size=4096; PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 300)
            INSERT INTO t(body) SELECT printf('row %d', i) FROM n;
            PRAGMA wal_checkpoint(TRUNCATE);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 300)
            INSERT INTO t(body) SELECT printf('later %d', i) FROM n;
            .shell cp '\(live)' '\(input)'; cp '\(live)-wal' '\(input)-wal'
            """)
        let clean = try Shell.run(Shell.cofferExecutable, ["verify", input, "--page-map", dir.path("wal.svg")])
        XCTAssertEqual(clean.status, 0, clean.stdout + clean.stderr)
        var wal = [UInt8](try Data(contentsOf: URL(fileURLWithPath: input + "-wal")))
        let pages = Set(WALBytes.frames(wal).map(\.page))
        XCTAssertEqual(try Self.parse(dir.path("wal.svg")).fate("fromWAL"), pages.count)

        // Damage the body of a leaf's frame (not page 1 or the root, not the commit frame, no later frame):
        // that page alone is lost, every other page of the WAL still comes from it.
        let frames = WALBytes.frames(wal)
        let victim = try XCTUnwrap(
            frames.indices.last { index in
                frames[index].page > 2 && frames[index].commit == 0 && frames.filter { $0.page == frames[index].page }.count == 1
            })
        wal[WALBytes.frameOffset(victim + 1, pageSize: 4096) + 24 + 100] ^= 0xFF
        try Data(wal).write(to: URL(fileURLWithPath: input + "-wal"))
        _ = try Shell.run(Shell.cofferExecutable, ["verify", input, "--page-map", dir.path("lost.svg")])
        let lost = try Self.parse(dir.path("lost.svg"))
        XCTAssertEqual(lost.fate("lost"), 1)
        XCTAssertEqual(lost.fate("fromWAL"), pages.count - 1)
    }

    /// The picture renders: `rsvg-convert` (librsvg) turns it into a PNG. Skipped when it is not installed.
    func testMapRendersToPNG() throws {
        guard
            let converter = ["/usr/bin/rsvg-convert", "/usr/local/bin/rsvg-convert"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else { throw XCTSkip("rsvg-convert is not installed (Debian: librsvg2-bin)") }
        let dir = try TemporaryDirectory()
        let input = try makeDamaged(dir)
        let repair = try Shell.run(
            Shell.cofferExecutable,
            ["repair", input, "-o", dir.path("out.db"), "--page-map", dir.path("map.svg"), "--passphrase-file", dir.path("pw")])
        XCTAssertEqual(repair.status, 0, repair.stderr)
        let render = try Shell.run(converter, [dir.path("map.svg"), "-o", dir.path("map.png")])
        XCTAssertEqual(render.status, 0, render.stderr)
        let png = try Data(contentsOf: URL(fileURLWithPath: dir.path("map.png")))
        XCTAssertEqual([UInt8](png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        XCTAssertGreaterThan(png.count, 1000)
    }
}
