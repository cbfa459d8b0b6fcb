import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// A table whose name and columns are SQL keywords.
@Table("select")
struct Keyword: Codable, Equatable {
    @Column(primaryKey: true) var `where`: Int64?
    @Column(unique: true) var `from`: String
    var `order`: String?
    var `group`: Data
}

/// Hostile strings through every builder entry point: each value reads back byte for byte and the
/// schema never changes. Deterministic from a seed.
final class InjectionPropertyTests: XCTestCase {
    private static let pieces = [
        "'", "''", "\"", "`", "[", "]", "'); DROP TABLE \"select\"; --", "\"; DROP TABLE t; --", "\0", "a\0b",
        "\u{202E}", "\u{200F}", "\u{200B}", "🧪", "👩‍👩‍👧‍👦", "\\", "%", "_", "?", "?1", ":name", "@p", "$1", "NULL",
        "SELECT", "DROP", "TABLE", "\n", "\r\n", "\t", "é", "e\u{301}", "\u{FFFD}", "\u{10FFFF}", "/*", "*/", "--",
        ";", " ", "x", "ESCAPE", "LIKE", "\u{FEFF}", "\u{7F}",
    ]

    func testHostileValuesRoundTripThroughEveryEntryPoint() throws {
        let database = try makeDatabase()
        try database.write { db in _ = try db.upgradeSchema(for: [Keyword.self]) }
        let schemaBefore = try schema(database)
        var generator = SeededGenerator(seed: 0xC0FFEE)
        var strings = (0..<2_000).map { _ in Self.hostileString(&generator) }
        strings.append(String(repeating: "'; DROP TABLE x; -- ", count: 52_429))  // about 1 MB
        strings.append(contentsOf: Self.pieces)

        try database.write { db in
            for (offset, text) in strings.enumerated() {
                try checkRoundTrip(text, bytes: Self.hostileBytes(&generator), db)
                if offset % 20 == 0 { try checkIdentifier(text, db) }
            }
        }
        XCTAssertEqual(try schema(database), schemaBefore)
    }

    private func checkRoundTrip(_ text: String, bytes: Data, _ db: Connection) throws {
        let context = "value \(text.debugDescription.prefix(80))"
        // insert, then filter by equality
        var record = Keyword(where: nil, from: text, order: text, group: bytes)
        try record.insert(db)
        XCTAssertEqual(try Keyword.filter { $0.from == text }.fetchAll(db), [record], context)
        // upsert on the unique hostile key updates in place
        var incoming = Keyword(where: nil, from: text, order: text + "'", group: bytes)
        try incoming.upsert(db) { [$0.from] }
        XCTAssertEqual(incoming.where, record.where, context)
        // update with a hostile assignment
        XCTAssertEqual(try Keyword.filter { $0.where == record.where }.updateAll(db) { [$0.order.set(to: text)] }, 1, context)
        XCTAssertEqual(try Keyword.select { $0.order }.fetchAll(db), [text], context)
        XCTAssertEqual(try Keyword.select { $0.group }.fetchAll(db), [bytes], context)
        // LIKE helpers, IN lists, inequality, SQL literals, record update
        XCTAssertEqual(try Keyword.filter { $0.from.contains(text) && $0.from.hasSuffix(text) }.fetchCount(db), 1, context)
        if text.utf8.count < 50_000 || text.utf8.contains(0) {
            XCTAssertEqual(try Keyword.filter { $0.from.hasPrefix(text) }.fetchCount(db), 1, context)
        } else {
            // SQLite refuses LIKE patterns over 50,000 bytes (SQLITE_LIMIT_LIKE_PATTERN_LENGTH): a typed error.
            XCTAssertThrowsError(try Keyword.filter { $0.from.hasPrefix(text) }.fetchCount(db)) { error in
                XCTAssertTrue(error is CofferError)
            }
        }
        XCTAssertEqual(try Keyword.filter { $0.from.in([text, text + "x"]) }.fetchCount(db), 1, context)
        XCTAssertEqual(try Keyword.filter { $0.from != text }.fetchCount(db), 0, context)
        XCTAssertEqual(try db.fetchValue(String.self, SQL("SELECT \(text)")), text, context)
        XCTAssertEqual(
            try db.fetchValue(
                Int.self, SQL("SELECT count(*) FROM \(identifier: "select") WHERE \(identifier: "from") = \(text)")), 1, context)
        if !text.utf8.contains(0), text.contains(where: { $0 == "%" || $0 == "_" }) {
            // Unescaped wildcards would also match a decoy where they stand for other characters.
            var decoy = Keyword(
                where: nil, from: String(text.map { $0 == "%" || $0 == "_" ? "Z" : $0 }), order: nil, group: Data())
            try decoy.insert(db, onConflict: .ignore)
            XCTAssertEqual(try Keyword.filter { $0.from.contains(text) }.select { $0.from }.fetchAll(db), [text], context)
            try Keyword.filter { $0.from != text }.deleteAll(db)
        }
        record.order = nil
        XCTAssertTrue(try record.update(db), context)
        XCTAssertEqual(try Keyword.filter { $0.order == nil }.select { $0.from }.fetchAll(db), [text], context)
        // delete by predicate and by primary key
        XCTAssertEqual(try Keyword.filter { $0.from == text }.deleteAll(db), 1, context)
        XCTAssertFalse(try record.delete(db), context)
    }

    /// Hostile identifiers are quoted: a table named by the string is created, used and dropped, and
    /// one containing NUL is refused before it reaches SQLite.
    private func checkIdentifier(_ name: String, _ db: Connection) throws {
        let create = SQL("CREATE TABLE \(identifier: name) (\(identifier: name + "c") TEXT)")
        guard !name.isEmpty, !name.utf8.contains(0) else {
            XCTAssertThrowsError(try db.execute(create))
            return
        }
        try db.execute(create)
        try db.execute(SQL("INSERT INTO \(identifier: name) VALUES (\(name))"))
        XCTAssertEqual(try db.fetchValue(String.self, SQL("SELECT \(identifier: name + "c") FROM \(identifier: name)")), name)
        try db.execute(SQL("DROP TABLE \(identifier: name)"))
    }

    private func schema(_ database: Database) throws -> [[DatabaseValue]] {
        try database.read { db in try db.fetchAll(sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name") }
            .map(\.values)
    }

    private static func hostileString(_ generator: inout SeededGenerator) -> String {
        let count = Int(generator.next() % 6) + 1
        return (0..<count).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
    }

    /// Random bytes, including invalid UTF-8: encoded surrogates, lone continuation bytes, 0xFF, NUL.
    private static func hostileBytes(_ generator: inout SeededGenerator) -> Data {
        let fragments: [[UInt8]] = [[0xED, 0xA0, 0x80], [0x80], [0xFF, 0xFE], [0], [0x27], [0x22], [0xC3]]
        let count = Int(generator.next() % 5)
        return Data((0..<count).flatMap { _ in fragments[Int(generator.next() % UInt64(fragments.count))] })
    }
}
