import CofferTestSupport
import Foundation
import XCTest

/// Mistakes the typed query interface must reject at compile time. Each snippet is type-checked by the
/// real compiler against the freshly built `Coffer` module and macro plugin; the control snippet proves
/// the setup works, so a failure below is the type system at work, not a missing module.
final class CompileFailTests: XCTestCase {
    private static let declarations = """
        import Coffer
        import Foundation

        @Table("conversation")
        struct Conversation: Codable {
            @Column(primaryKey: true) var id: Int64?
            var title: String
            var archived: Bool
        }

        @Table("message")
        struct Message: Codable {
            @Column(primaryKey: true) var id: Int64?
            var conversationID: Int64
            var body: String
            var score: Double
        }

        @Table("attachment")
        struct Attachment: Codable {
            @Column(primaryKey: true) var id: Int64?
            var messageID: Int64
        }

        extension Message {
            static let conversationKey = ForeignKey(columns.conversationID, references: Conversation.columns.id)
        }

        """

    func testControlSnippetCompiles() throws {
        let result = try typecheck(
            """
            @Table public struct Published: Codable {
                @Column(primaryKey: true) public var id: Int?
                @Column(unique: true, default: "none") public var slug: String
            }

            func control(_ db: Connection) throws {
                var published = Published(id: nil, slug: "a")
                try published.upsert(db) { [$0.slug] }
                _ = try Message.filter { $0.conversationID == 42 && $0.body.contains("x") }
                    .order { $0.score.desc }.fetchAll(db)
                _ = try Message.filter { $0.score > 1 }.updateAll(db) { [$0.score.set(to: $0.score + 1)] }
                _ = try Message.all().join(Conversation.self) { m, c in m.conversationID == c.id }
                    .filter { _, c in c.archived == false }.fetchAll(db)
                _ = try Message.filter { $0.conversationID.in(Conversation.all().select { $0.id }) }.fetchCount(db)
                let messages = Conversation.hasMany(Message.self, using: Message.conversationKey)
                _ = try Conversation.including(all: messages.order { [$0.score.desc] }).fetchAll(db)
                let conversation = Message.belongsTo(Conversation.self, using: Message.conversationKey)
                _ = try Message.including(required: conversation).fetchAll(db)
                _ = try Conversation.including(all: messages.including(required: conversation)).fetchAll(db)
                let c = Conversation(id: 1, title: "t", archived: false)
                let m = Message(id: 1, conversationID: 1, body: "b", score: 0)
                let _: [Message] = try messages.records(of: c)
                let _: Conversation? = try conversation.record(of: m)
            }
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func testACompressedPrimaryKeyDoesNotCompile() throws {
        let result = try typecheck(
            """
            @Table("bad") struct Bad: Codable {
                @Column(primaryKey: true, compressed: .zstd) var id: Int64?
                var text: String
            }
            """)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("it cannot be compressed"), result.stderr)
    }

    func testADictionaryPickedByAnUnknownColumnDoesNotCompile() throws {
        let result = try typecheck(
            """
            @Table("bad") struct Bad: Codable {
                @Column(primaryKey: true) var id: Int64?
                var kind: Int64
                @Column(compressed: .dictionaries(by: "type", [1: 1])) var text: String
            }
            """)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("which is no column of the table"), result.stderr)
    }

    func testComparingAColumnWithAValueOfAnotherTypeDoesNotCompile() throws {
        try assertDoesNotCompile("_ = Message.filter { $0.conversationID == \"42\" }")
    }

    func testComparingColumnsOfDifferentTypesDoesNotCompile() throws {
        try assertDoesNotCompile("_ = Message.filter { $0.body == $0.score }")
    }

    func testOrderingByAnotherTablesColumnDoesNotCompile() throws {
        try assertDoesNotCompile("_ = Message.order { _ in Conversation.columns.title.asc }")
    }

    func testFilteringByAnotherTablesColumnDoesNotCompile() throws {
        try assertDoesNotCompile("_ = Message.filter { _ in Conversation.columns.archived == true }")
    }

    func testAnUnknownColumnDoesNotCompile() throws {
        try assertDoesNotCompile("_ = Message.filter { $0.sender == \"ann\" }")
    }

    func testAssigningAValueOfAnotherTypeDoesNotCompile() throws {
        try assertDoesNotCompile(
            "func f(_ db: Connection) throws { _ = try Message.all().updateAll(db) { [$0.score.set(to: \"high\")] } }")
    }

    func testLikeOnANonTextColumnDoesNotCompile() throws {
        try assertDoesNotCompile("_ = Message.filter { $0.score.contains(\"1\") }")
    }

    func testAJoinCannotBeFilteredByAThirdTable() throws {
        try assertDoesNotCompile(
            """
            _ = Message.all().join(Conversation.self) { m, c in m.conversationID == c.id }
                .filter { _, _ in Attachment.columns.messageID == 1 }
            """)
    }

    func testAGroupListCannotMixTables() throws {
        try assertDoesNotCompile("_ = Message.all().group { _ in [Conversation.columns.id] }")
    }

    func testAForeignKeyToAColumnOfAnotherTypeDoesNotCompile() throws {
        try assertDoesNotCompile("_ = ForeignKey(Message.columns.body, references: Conversation.columns.id)")
    }

    func testAnAssociationThroughAnotherTablesKeyDoesNotCompile() throws {
        try assertDoesNotCompile("_ = Conversation.hasMany(Attachment.self, using: Message.conversationKey)")
    }

    func testABelongsToAssociationTheWrongWayRoundDoesNotCompile() throws {
        try assertDoesNotCompile("_ = Conversation.belongsTo(Message.self, using: Message.conversationKey)")
    }

    func testAssociatedRowsCannotBeFilteredByTheOriginsColumns() throws {
        try assertDoesNotCompile(
            "_ = Conversation.hasMany(Message.self, using: Message.conversationKey).filter { $0.archived == false }")
    }

    func testALazyLoadFromARecordOfAnotherTypeDoesNotCompile() throws {
        try assertDoesNotCompile(
            """
            let messages = Conversation.hasMany(Message.self, using: Message.conversationKey)
            _ = try? messages.records(of: Attachment(id: 1, messageID: 1))
            """)
    }

    func testAToManyAssociationHasNoSingleRecordToLoad() throws {
        try assertDoesNotCompile(
            """
            let messages = Conversation.hasMany(Message.self, using: Message.conversationKey)
            _ = try? messages.record(of: Conversation(id: 1, title: "t", archived: false))
            """)
    }

    func testANestedAssociationMustStartFromTheOuterOnesRecords() throws {
        try assertDoesNotCompile(
            """
            let messages = Conversation.hasMany(Message.self, using: Message.conversationKey)
            _ = messages.including(required: Conversation.hasOne(Message.self, using: Message.conversationKey))
            """)
    }

    func testANestedAssociationOfAnotherTableDoesNotCompile() throws {
        try assertDoesNotCompile(
            """
            let messages = Conversation.hasMany(Message.self, using: Message.conversationKey)
            _ = messages.including(all: messages)
            """)
    }

    func testAPropertyWithoutATypeAnnotationIsAMacroError() throws {
        let result = try typecheck("@Table struct Untyped: Codable { var count = 0 }\n")
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("@Table needs an explicit type on 'count'"), result.stderr)
    }

    /// The binder `@Table` generates for `Message`: one conversion per column, by the overload its
    /// static type selects, then the binds nested in column order with the statement's run innermost;
    /// none for a type whose own `encode(to:)` must run. And its reader: every column read into a local
    /// by position (an optional through `decodeIfPresent`), then the properties assigned; none for a type
    /// whose own `init(from:)` must run.
    func testTheTableMacroGeneratesTheBinderAndReaderUnlessTheTypeCodesItself() throws {
        let result = try typecheck(
            """
            @Table struct SelfEncoded: Codable {
                var id: Int64
                func encode(to encoder: any Encoder) throws {}
            }

            @Table struct SelfDecoded: Codable {
                var id: Int64
                init(from decoder: any Decoder) throws { id = 0 }
            }
            """, arguments: ["-Xfrontend", "-dump-macro-expansions"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let expansion = result.stderr.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: "\n")
        let message = """
            func bindColumns(to binder: Coffer.RecordBinder, then body: () throws -> Void) throws {
            let value1 = try Coffer.DatabaseValue.optionalColumnValue(self.id)
            let value2 = try Coffer.DatabaseValue.columnValue(self.conversationID)
            let value3 = try Coffer.DatabaseValue.columnValue(self.body)
            let value4 = try Coffer.DatabaseValue.columnValue(self.score)
            try binder.bind(value1, at: 1) {
            try binder.bind(value2, at: 2) {
            try binder.bind(value3, at: 3) {
            try binder.bind(value4, at: 4) {
            try body()
            }
            }
            }
            }
            }
            """
        XCTAssertTrue(expansion.contains(message), expansion)
        // Conversation, Message, Attachment and SelfDecoded get one; SelfEncoded keeps the default.
        XCTAssertEqual(expansion.components(separatedBy: "func bindColumns(").count - 1, 4, expansion)
        let reader = """
            init(statementRow row: Coffer.StatementRow) throws {
            let column0 = try row.decodeIfPresent(Int64.self, at: 0)
            let column1 = try row.decode(Int64.self, at: 1)
            let column2 = try row.decode(String.self, at: 2)
            let column3 = try row.decode(Double.self, at: 3)
            self.id = column0
            self.conversationID = column1
            self.body = column2
            self.score = column3
            }
            """
        XCTAssertTrue(expansion.contains(reader), expansion)
        // Conversation, Message, Attachment and SelfEncoded get one; SelfDecoded keeps its own.
        XCTAssertEqual(expansion.components(separatedBy: "init(statementRow row:").count - 1, 4, expansion)
    }

    // MARK: Compiler driving

    private func assertDoesNotCompile(_ body: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try typecheck("func snippet() {\n\(body)\n}\n")
        XCTAssertNotEqual(result.status, 0, "compiled, but must not:\n\(body)", file: file, line: line)
        XCTAssertTrue(result.stderr.contains("error:"), result.stderr, file: file, line: line)
        XCTAssertFalse(result.stderr.contains("no such module"), result.stderr, file: file, line: line)
    }

    private func typecheck(_ body: String, arguments extra: [String] = []) throws -> Shell.Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-compile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let snippet = directory.appendingPathComponent("snippet.swift")
        try (Self.declarations + body).write(to: snippet, atomically: true, encoding: .utf8)
        let products = try Self.productsDirectory()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var arguments = [
            "swiftc", "-typecheck", "-swift-version", "6",
            "-I", products.appendingPathComponent("Modules").path,
            "-Xcc", "-fmodule-map-file=" + root.appendingPathComponent("Sources/CSQLCipher/module.modulemap").path,
            "-Xcc", "-fmodule-map-file=" + root.appendingPathComponent("Sources/CofferVFS/include/module.modulemap").path,
            "-Xcc", "-fmodule-map-file=" + root.appendingPathComponent("Sources/CofferPageCache/include/module.modulemap").path,
            "-Xcc", "-fmodule-map-file=" + root.appendingPathComponent("Sources/CofferTokenizer/include/module.modulemap").path,
            "-Xcc", "-fmodule-map-file=" + root.appendingPathComponent("Sources/COpenSSL/module.modulemap").path,
            "-Xcc", "-fmodule-map-file=" + root.appendingPathComponent("Sources/CZstd/module.modulemap").path,
            "-load-plugin-executable", products.appendingPathComponent("CofferMacros-tool").path + "#CofferMacros",
        ]
        if FileManager.default.fileExists(atPath: "/usr/include/sqlcipher") { arguments += ["-I", "/usr/include/sqlcipher"] }
        // swift-atomics' C shim (CofferEngine's writer queue counts its waiting callers with it), checked
        // out beside the build: `<scratch>/checkouts`, products being `<scratch>/<triple>/<configuration>`.
        for scratch in [products.deletingLastPathComponent(), products.deletingLastPathComponent().deletingLastPathComponent()] {
            let shim = scratch.appendingPathComponent("checkouts/swift-atomics/Sources/_AtomicsShims/include/module.modulemap")
            if FileManager.default.fileExists(atPath: shim.path) { arguments += ["-Xcc", "-fmodule-map-file=" + shim.path] }
        }
        return try Shell.run("/usr/bin/env", arguments + extra + [snippet.path])
    }

    /// The build's products directory: the parent of the test bundle, which holds `Modules/Coffer.swiftmodule`.
    private static func productsDirectory() throws -> URL {
        let candidates = [
            Bundle(for: CompileFailTests.self).bundleURL,
            Bundle.main.bundleURL,
            URL(fileURLWithPath: CommandLine.arguments[0]),
        ]
        for candidate in candidates {
            for directory in [candidate, candidate.deletingLastPathComponent()]
            where FileManager.default.fileExists(atPath: directory.appendingPathComponent("Modules/Coffer.swiftmodule").path) {
                return directory
            }
        }
        throw XCTSkip("no build products directory next to the test bundle: \(candidates)")
    }
}
