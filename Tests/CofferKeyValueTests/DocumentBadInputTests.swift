import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class DocumentBadInputTests: XCTestCase {
    private let oddNames = ["a.b", "x[]", "[", "q\"'`", "back\\slash", "nul\u{0}inside", "🙂‍↔️", "", "%_"]

    func testOddAttributeNamesKeysBagsAndStoreNames() throws {
        let database = try Database.temporary()
        for storeName in ["st\"ore'.[]", "🙂", "%_\\"] {
            let store = try DocumentStore(database: database, name: storeName)
            for (index, name) in oddNames.enumerated() {
                let key = "key \(name)"
                try store.put([name: .string("value \(name)"), "n": .int(Int64(index))], for: key)
                try store.add([key], toBag: "bag \(name)")
                let path = DocumentPath([.key(name)])
                XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField(path) == .string("value \(name)"))), [key])
                XCTAssertEqual(try store.keys(inBag: "bag \(name)"), [key])
                XCTAssertEqual(try store.document(for: key)?[name], .string("value \(name)"))
            }
            XCTAssertEqual(try store.count(), oddNames.count)
        }
        XCTAssertEqual(try DocumentStore.storeNames(in: database), ["%_\\", "st\"ore'.[]", "🙂"])
    }

    func testOneMegabyteStringsAsValuesKeysAndPatterns() throws {
        let store = try DocumentStore(database: try Database.temporary(), name: "big")
        let big = String(repeating: "ab🙂\u{0}", count: 1 << 18)
        try store.put(["text": .string(big)], for: big)
        XCTAssertEqual(try store.document(for: big)?["text"], .string(big))
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("text").beginsWith(big))), [big])
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("text").endsWith("🙂\u{0}"))), [big])
        XCTAssertEqual(try store.count(matching: DocumentQuery(DocumentField("text").contains(big + "x"))), 0)
    }

    func testThousandLevelDeepNestingIsATypedErrorAndWritesNothing() throws {
        let store = try DocumentStore(database: try Database.temporary(), name: "deep", limits: .init(maximumDepth: 5000))
        XCTAssertEqual(store.limits.maximumDepth, 512, "capped to what decoding accepts")
        var deep = DocumentValue.int(1)
        for level in 0..<1000 { deep = level.isMultiple(of: 2) ? ["child": deep] : [deep] }
        XCTAssertThrowsError(try store.put(deep, for: "deep")) { error in
            XCTAssertEqual((error as? DocumentError)?.reason, .nestingTooDeep)
        }
        XCTAssertEqual(try store.count(), 0)
        // Within the limit it is stored and searchable at its full path.
        var shallow = DocumentValue.int(7)
        for _ in 0..<60 { shallow = ["c": shallow] }
        try store.put(shallow, for: "ok")
        let path = DocumentPath(Array(repeating: .key("c"), count: 60))
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField(path) == 7)), ["ok"])
        XCTAssertEqual(try store.value(for: "ok"), shallow)
    }

    func testAHundredThousandAttributesAreRefusedByDefaultAndStoredWhenAllowed() throws {
        let members = Dictionary(uniqueKeysWithValues: (0..<100_000).map { ("a\($0)", DocumentValue.int(Int64($0))) })
        let database = try Database.temporary()
        let store = try DocumentStore(database: database, name: "wide")
        XCTAssertThrowsError(try store.put(members, for: "wide")) { error in
            XCTAssertEqual((error as? DocumentError)?.reason, .tooManyAttributes)
        }
        XCTAssertEqual(try store.count(), 0)
        let roomy = try DocumentStore(database: database, name: "wide", limits: .init(maximumAttributeCount: 100_000))
        try roomy.put(members, for: "wide")
        XCTAssertEqual(try roomy.keys(matching: DocumentQuery(DocumentField("a99999") == 99_999)), ["wide"])
        XCTAssertEqual(try roomy.aggregate(.count, of: "a5"), 1)
    }

    /// Damaged stored bytes give a typed error, never a crash: random bodies and truncations of a real one.
    func testDamagedDocumentBytesAreATypedError() throws {
        let database = try Database.temporary()
        let store = try DocumentStore(database: database, name: "d")
        let real: Document = ["name": "Tom", "tags": ["a", ["b": 1.5]], "when": .date(Date()), "blob": .data(Data([9]))]
        try store.put(real, for: "real")
        let body = try XCTUnwrap(database.read { db in try db.fetchValue(Data.self, sql: "SELECT body FROM \"doc:d\"") })
        var generator = SeededGenerator(seed: 24)
        var candidates = (0..<body.count).map { body.prefix($0) }
        for _ in 0..<2000 {
            var bytes = Data((0..<generator.next(upTo: 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
            if generator.next(upTo: 2) == 0 { bytes = Data([1]) + bytes }
            candidates.append(bytes)
        }
        var rejected = 0
        for candidate in candidates {
            try database.write { db in try db.execute(sql: "UPDATE \"doc:d\" SET body = ?", arguments: [candidate]) }
            do {
                _ = try store.value(for: "real")
            } catch let error as DocumentError {
                XCTAssertEqual(error.reason, .decodingFailed)
                rejected += 1
            }
        }
        XCTAssertGreaterThanOrEqual(rejected, body.count, "every truncation is rejected")
    }
}
