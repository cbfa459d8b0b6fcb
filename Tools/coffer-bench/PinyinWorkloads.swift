import CSQLCipher
import Coffer
import CofferTestSupport
import CofferTokenizer
import Foundation

@Table("contact") struct BenchContact: Codable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
    var nickname: String
}

extension BenchContact: FullTextSearchable {
    /// FTS4, or FTS5 when `COFFER_BENCH_FULLTEXT_ENGINE=fts5` (on a library with FTS5: SQLCipher 4).
    static let fullTextIndex = FullTextIndex<BenchContact>(
        columns.name, columns.nickname, tokenizer: .pinyin,
        engine: ProcessInfo.processInfo.environment["COFFER_BENCH_FULLTEXT_ENGINE"] == "fts5" ? .fts5 : .fts4)
}

/// W8's pinyin lines: `count` generated contacts (a 2–3 character Chinese name, surnames by real frequency,
/// and a Latin nickname for one in three) indexed with `tokenize=coffer_pinyin` in transactions of 1,000
/// (`W8-pinyin-index`), optimized to one segment, then `queries` searches of each kind for a random
/// contact, each fetching the first 50 matching rows: `W8-pinyin-full` (`zhangsanfeng`),
/// `W8-pinyin-initials` (`zsf`), `W8-pinyin-mixed` (the first character, then pinyin, the last syllable
/// cut while typing: `张sanf`). A character's reading is the table's first (alphabetical), which the index
/// holds like every other.
///
/// Coffer's time includes `FullTextPattern.pinyin(_:)` reading the typed text; raw C runs the match text it
/// renders (computed before timing) through `coffer_fts_register`'s same tokenizer, in one prepared
/// statement. The index's size against the names' bytes goes to standard error.
///
/// `COFFER_BENCH_FULLTEXT_ENGINE=fts5` makes Coffer's index an FTS5 table (raw C stays on FTS4): on a build
/// against SQLCipher 4, FTS4 and FTS5 through the same tokenizer and patterns.
struct PinyinWorkloads {
    let harness: Harness
    let count: Int
    let queries: Int

    /// The 20 commonest surnames with their shares (%) from the Chinese Academy of Sciences' 2006 survey
    /// (296 million people), then 40 more from the Ministry of Public Security's 2019 ranking at 0.5%.
    private static let topShares = [
        7.94, 7.41, 7.07, 5.38, 4.53, 3.08, 2.29, 2.23, 2.12, 2.05, 1.67, 1.54, 1.31, 1.26, 1.21, 1.18, 1.17, 1.15, 1.05, 0.86,
    ]
    private static let surnames: [(Character, Double)] =
        Array(zip("李王张刘陈杨赵黄周吴徐孙胡朱高林何郭马罗", topShares))
        + "梁宋郑谢韩唐冯于董萧程曹袁邓许傅沈曾彭吕苏卢蒋蔡贾丁魏薛叶阎余潘杜戴夏钟汪田任姜".map { ($0, 0.5) }
    private static let given = Array(
        "伟芳娜秀英敏静丽强磊军洋勇艳杰娟涛明超兰霞平刚桂华建国红玉梅飞鹏辉宇浩然子涵欣怡梓轩思雨晨博文雅婷佳琪俊豪嘉诗泽一诺睿可馨瑞宏志海波燕萍玲琳晶颖丹阳亮成斌峰东龙春雪云凤长乐")
    private static let nicknames = ["Sam", "Amy", "Leo", "Coco", "Kevin", "Lily", "Jack", "Momo", "Tony", "Vivian"]

    private struct Contact {
        var name: String
        var nickname: String
        var syllables: [String]
    }

    private static func contacts(_ count: Int, _ random: inout SeededGenerator) -> [Contact] {
        let total = surnames.reduce(0) { $0 + $1.1 }
        return (0..<count).map { _ in
            var pick = Double(random.next(upTo: 1_000_000)) / 1_000_000 * total
            var surname = surnames[0].0
            for (character, share) in surnames {
                pick -= share
                if pick <= 0 {
                    surname = character
                    break
                }
            }
            var name = String(surname)
            for _ in 0..<(1 + random.next(upTo: 2)) { name.append(given[random.next(upTo: given.count)]) }
            let syllables = name.unicodeScalars.map { scalar in
                coffer_pinyin_reading(scalar.value, 0).map { String(cString: $0) } ?? ""
            }
            let nickname = random.next(upTo: 3) == 0 ? nicknames[random.next(upTo: nicknames.count)] : ""
            return Contact(name: name, nickname: nickname, syllables: syllables)
        }
    }

    func run(_ impl: Implementation) throws -> [Measurement] {
        guard impl == .rawC || impl == .coffer else { return [] }
        var random = SeededGenerator(seed: 0x5EED_0042)
        let contacts = Self.contacts(count, &random)
        var kinds: [(String, [String])] = [("W8-pinyin-full", []), ("W8-pinyin-initials", []), ("W8-pinyin-mixed", [])]
        for _ in 0..<queries {
            let contact = contacts[random.next(upTo: contacts.count)]
            kinds[0].1.append(contact.syllables.joined())
            kinds[1].1.append(String(contact.syllables.compactMap(\.first)))
            let last = contact.syllables.last ?? ""
            let cut = String(last.prefix(1 + random.next(upTo: max(last.count, 1))))
            kinds[2].1.append(String(contact.name.prefix(1)) + contact.syllables.dropFirst().dropLast().joined() + cut)
        }
        let path = harness.freshPath("w8-pinyin")
        var results: [Measurement] = []
        switch impl {
        case .rawC:
            // Checkpoints as W8's raw side (SQLite's default), as Coffer's checkpointer copies while it indexes.
            let connection = try RawConnection(
                path: path, key: WriteWorkloads.passphrase, cacheKiB: harness.cacheKiB, autoCheckpointPages: 1000)
            guard coffer_fts_register(connection.handle) == SQLITE_OK else { throw BenchError("W8-pinyin: register") }
            let index = try QueryTiming.seconds { try Self.rawIndex(contacts, connection) }
            connection.exec("INSERT INTO contact_fts(contact_fts) VALUES ('optimize')")
            Self.reportSize(connection.handle, impl)
            connection.exec("PRAGMA wal_checkpoint(TRUNCATE)")
            sqlite3_db_release_memory(connection.handle)
            results.append(QueryTiming.measurement("W8-pinyin-index", impl, [index], operations: count))
            for (name, typed) in kinds {
                let texts = try typed.map { try FullTextPattern.pinyin($0).matchExpression() }
                results.append(QueryTiming.measurement(name, impl, try Self.rawQueries(texts, connection), operations: 1))
            }
        default:
            let database = try Database(path: path, configuration: harness.configuration(impl))
            defer { try? database.close() }
            _ = try database.write { try $0.upgradeSchema(for: [BenchContact.self]) }
            let index = try QueryTiming.seconds {
                for start in stride(from: 0, to: contacts.count, by: 1_000) {
                    let rows = contacts[start..<min(start + 1_000, contacts.count)].lazy.map {
                        BenchContact(id: nil, name: $0.name, nickname: $0.nickname)
                    }
                    _ = try database.write { db in try BenchContact.insertAll(rows, db) }
                }
            }
            try database.write { try BenchContact.fullTextIndex.optimize($0) }
            try database.read { Self.reportSize($0.handle, impl) }
            try database.checkpoint(.truncate)
            Thread.sleep(forTimeInterval: 2 * harness.configuration(impl).idleCheckpointDelay + 0.5)
            results.append(QueryTiming.measurement("W8-pinyin-index", impl, [index], operations: count))
            let page = try BenchContact.matching(.parameter).limit(50).prepared()
            let engine = BenchContact.fullTextIndex.engine
            for (name, typed) in kinds {
                let times = try typed.map { text in
                    try QueryTiming.seconds {
                        _ = try database.read {
                            try page.fetchAll($0, try FullTextPattern.pinyin(text).matchExpression(for: engine))
                        }
                    }
                }
                results.append(QueryTiming.measurement(name, impl, times, operations: 1))
            }
        }
        return results
    }

    private static func rawIndex(_ contacts: [Contact], _ connection: RawConnection) throws {
        connection.exec("CREATE TABLE contact(id INTEGER PRIMARY KEY, name TEXT NOT NULL, nickname TEXT NOT NULL)")
        connection.exec(
            "CREATE VIRTUAL TABLE contact_fts USING fts4(content=\"contact\", name, nickname, tokenize=coffer_pinyin)")
        let insert = try connection.prepare("INSERT INTO contact(name, nickname) VALUES (?, ?)")
        let index = try connection.prepare("INSERT INTO contact_fts(docid, name, nickname) VALUES (?, ?, ?)")
        defer {
            sqlite3_finalize(insert)
            sqlite3_finalize(index)
        }
        for start in stride(from: 0, to: contacts.count, by: 1_000) {
            connection.exec("BEGIN IMMEDIATE")
            for contact in contacts[start..<min(start + 1_000, contacts.count)] {
                try RawConnection.withStaticText([contact.name, contact.nickname], from: 1, on: insert) {
                    try connection.step(insert, expecting: SQLITE_DONE)
                }
                sqlite3_reset(insert)
                sqlite3_bind_int64(index, 1, sqlite3_last_insert_rowid(connection.handle))
                try RawConnection.withStaticText([contact.name, contact.nickname], from: 2, on: index) {
                    try connection.step(index, expecting: SQLITE_DONE)
                }
                sqlite3_reset(index)
            }
            connection.exec("COMMIT")
        }
    }

    /// Each query timed alone: bind, read the page's rows by pointer and byte count, reset.
    private static func rawQueries(_ patterns: [String], _ connection: RawConnection) throws -> [Double] {
        let statement = try connection.prepare(
            "SELECT contact.id, contact.name, contact.nickname FROM contact_fts JOIN contact"
                + " ON contact.rowid = contact_fts.docid WHERE contact_fts MATCH ? LIMIT 50")
        defer { sqlite3_finalize(statement) }
        return try QueryTiming.rawQueries(patterns, on: statement, connection, label: "W8-pinyin") { statement in
            BenchContact(
                id: sqlite3_column_int64(statement, 0), name: FullTextWorkloads.rawText(statement, 1),
                nickname: FullTextWorkloads.rawText(statement, 2))
        }
    }

    /// The index's size (its segments) against the names' and nicknames' bytes, on standard error.
    private static func reportSize(_ handle: OpaquePointer, _ impl: Implementation) {
        func value(_ sql: String) -> Double { QueryTiming.value(handle, sql) }
        let names = value("SELECT total(length(CAST(name AS BLOB))) FROM contact")
        let nicknames = value("SELECT total(length(CAST(nickname AS BLOB))) FROM contact")
        let index =
            BenchContact.fullTextIndex.engine == .fts5 && impl != .rawC
            ? QueryTiming.fts5IndexBytes(handle, table: "contact_fts") : QueryTiming.indexBytes(handle, table: "contact_fts")
        FileHandle.standardError.write(
            Data(
                String(
                    format: "W8-pinyin %@: index %.2f MB for %.2f MB of names and %.2f MB of nicknames"
                        + " (%.2f× the names, %.2f× both)\n",
                    impl.rawValue, index / 1e6, names / 1e6, nicknames / 1e6, index / max(names, 1),
                    index / max(names + nicknames, 1)
                ).utf8))
    }
}
