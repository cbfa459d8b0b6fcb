import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The README's tour record, in a namespace of its own (this target's top-level `Message` is
/// FullTextSearch.md's).
enum FrontPage {
    @Table("message") struct Message: Codable {
        @Column(primaryKey: true) var id: Int64?
        var conversationID: Int64
        var body: String
    }
}

/// The README's "Tour": its ```swift blocks, compiled and run as written, in order.
final class FrontPageTourTests: InTemporaryDirectoryTestCase {
    func testTheTourRunsAsWritten() throws {
        typealias Message = FrontPage.Message
        let badges = Received<Int>()
        @Sendable func showBadge(_ count: Int) { badges.append(count) }

        let database = try Database(
            path: "app.db",
            configuration: Configuration(encryption: .passphrase("correct horse battery staple")))

        try database.write { db in
            try db.upgradeSchema(for: [Message.self])  // creates the table, adds new columns
            var message = Message(id: nil, conversationID: 1, body: "50% off")
            try message.insert(db)
        }
        let hits = try database.read { db in
            try Message.filter { $0.body.contains("50%") }.order { $0.id.desc }.limit(20).fetchAll(db)
        }

        let store = try KeyValueStore(database: database, name: "drafts")
        try store.put("see you at 8", for: "conversation/1")
        let draft = try store.value(String.self, for: "conversation/1")

        let handle = database.observe({ db in try Message.filter { $0.conversationID == 1 }.fetchCount(db) }) { count in
            showBadge(count)  // on the main queue: now, then after each commit that changes it
        }

        try database.backup(to: URL(fileURLWithPath: "backups"))  // full, then incremental: changed pages only

        XCTAssertEqual(hits.map(\.body), ["50% off"])
        XCTAssertEqual(draft, "see you at 8")
        XCTAssertEqual(badges.wait { $0.last == 1 }.last, 1)
        try database.write { db in
            var message = Message(id: nil, conversationID: 1, body: "see you at 8")
            try message.insert(db)
        }
        XCTAssertEqual(badges.wait { $0.last == 2 }.last, 2)
        handle.cancel()
        XCTAssertEqual(try Database.backupGenerations(in: URL(fileURLWithPath: "backups")).count, 1)
        try database.close()
    }

    /// Every ```swift block of the README is in this file (up to whitespace), so the test above runs it.
    func testEveryReadmeBlockIsInThisFile() throws {
        let readme = try String(
            contentsOf: ArticleSnippetsAreCompiledTests.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let here = ArticleSnippetsAreCompiledTests.normalized(source)
        let blocks = ArticleSnippetsAreCompiledTests.swiftBlocks(in: readme)
        XCTAssertGreaterThanOrEqual(blocks.count, 5)
        for block in blocks where !here.contains(ArticleSnippetsAreCompiledTests.normalized(block)) {
            XCTFail("this README block is not in FrontPageTourTests.swift:\n\(block)")
        }
    }
}
