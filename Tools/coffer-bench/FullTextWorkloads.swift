import CSQLCipher
import Coffer
import CofferTokenizer
import Foundation

@Table("chat") struct BenchChat: Codable {
    @Column(primaryKey: true) var id: Int64?
    var conversationID: Int64
    var sender: String
    var body: String
}

extension BenchChat {
    /// The row a raw statement is on (columns id, conversationID, sender, body), read by pointer and
    /// byte count.
    init(statement: OpaquePointer) {
        self.init(
            id: sqlite3_column_int64(statement, 0), conversationID: sqlite3_column_int64(statement, 1),
            sender: FullTextWorkloads.rawText(statement, 2), body: FullTextWorkloads.rawText(statement, 3))
    }
}

extension BenchChat: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<BenchChat>(columns.body, columns.sender)
}

/// W8: full-text search. `W8-index`: `count` generated chat messages (Chinese, English, emoji, 5–200
/// characters) written in transactions of 1,000, content table and FTS4 index (`tokenize=coffer`)
/// together (Coffer: `insertAll`, which indexes a batch as one segment as raw C's direct inserts do).
/// `W8-optimize`: both sides merge their index into one segment (FTS4 `optimize`), so the queries read
/// the same index shape.
/// Then `queries` searches of each kind, each its own read and timed alone (p50/p99 in the
/// JSON): `W8-term` an English word, `W8-cjk` two Chinese characters, `W8-phrase` two adjacent English
/// words, `W8-prefix` three letters and `*` — each fetching the first 50 matching rows in index order
/// (`matching(.parameter)` prepared once, each search binding its pattern's match text, as raw C binds
/// it into its one prepared statement; the records; raw C reads each row into the same `BenchChat` by
/// pointer and byte count, as its other read workloads do) — and `W8-ranked` a word's top 20 by BM25
/// with a snippet (Coffer's from the matched ranges, raw C's `snippet()`). Both sides query a settled
/// file: WAL checkpointed and emptied, Coffer's idle checkpoint past, page caches empty (`settle`).
///
/// Raw C registers the same tokenizer through `coffer_fts_register` on its own connection, checkpoints
/// at SQLite's default 1,000 WAL pages (Coffer's threshold too; other raw workloads never checkpoint),
/// inserts into the content table and the index with two prepared statements (no triggers: the fastest way), and
/// runs the same MATCH text Coffer renders, through a join of the index and the content table.
struct FullTextWorkloads {
    let harness: Harness
    let count: Int
    let queries: Int

    func run(_ impl: Implementation) throws -> [Measurement] {
        var generator = ChatGenerator(seed: 0x5EED_0008)
        let messages = (0..<count).map { _ in generator.message() }
        let kinds = QueryKinds<FullTextPattern>(
            messages: messages, count: queries, generator: &generator,
            render: .init(term: { .term($0) }, phrase: { .phrase($0) }, prefix: { .prefix($0) }))
        let path = harness.freshPath("w8")
        switch impl {
        case .rawC, .rawCPlain:
            // SQLite's own checkpoint default, where RawConnection's is none: Coffer copies its WAL back
            // every 1,000 pages (`checkpointThreshold`) while it indexes, so raw C copies as much.
            let connection = try RawConnection(
                path: path, key: impl.rawKey, cacheKiB: harness.cacheKiB, autoCheckpointPages: 1000)
            guard coffer_fts_register(connection.handle) == SQLITE_OK else { throw BenchError("W8: register") }
            let index = try QueryTiming.seconds { try Self.rawIndex(messages, connection) }
            Self.reportSize(connection.handle, impl)
            let optimize = try QueryTiming.seconds { connection.exec("INSERT INTO chat_fts(chat_fts) VALUES ('optimize')") }
            // Queries start from what Coffer's reader sees: the WAL copied back and emptied, and a page
            // cache that the writer's commits left empty (see `settle`).
            connection.exec("PRAGMA wal_checkpoint(TRUNCATE)")
            sqlite3_db_release_memory(connection.handle)
            return [QueryTiming.measurement("W8-index", impl, [index], operations: count)]
                + [QueryTiming.measurement("W8-optimize", impl, [optimize], operations: 1)]
                + (try kinds.all.map { name, patterns in
                    let texts = try patterns.map { try $0.matchExpression() }
                    return QueryTiming.measurement(
                        name, impl, try Self.rawQueries(texts, ranked: name == "W8-ranked", connection), operations: 1)
                })
        case .coffer, .cofferPlain:
            let database = try Database(path: path, configuration: harness.configuration(impl))
            defer { try? database.close() }
            _ = try database.write { try $0.upgradeSchema(for: [BenchChat.self]) }
            let index = try QueryTiming.seconds { try Self.cofferIndex(messages, database) }
            try database.read { Self.reportSize($0.handle, impl) }
            let optimize = try QueryTiming.seconds { try database.write { try BenchChat.fullTextIndex.optimize($0) } }
            try Self.settle(database, harness.configuration(impl))
            var results = [
                QueryTiming.measurement("W8-index", impl, [index], operations: count),
                QueryTiming.measurement("W8-optimize", impl, [optimize], operations: 1),
            ]
            for (name, patterns) in kinds.all {
                results.append(
                    QueryTiming.measurement(
                        name, impl, try Self.cofferQueries(patterns, ranked: name == "W8-ranked", database), operations: 1))
            }
            return results
        }
    }

    /// Brings Coffer's file to the state raw C's queries start from: the WAL copied back and emptied, and
    /// the idle checkpoint past, which would otherwise run during the queries (2 × its delay after the
    /// last commit, at most) and, by restarting the WAL, empty the reader's page cache in the middle of
    /// a kind. The reader's cache is empty either way: another connection's commit (the optimize)
    /// invalidates it, which is why raw C drops its own cache before its queries.
    private static func settle(_ database: Database, _ configuration: Configuration) throws {
        try database.checkpoint(.truncate)
        Thread.sleep(forTimeInterval: 2 * configuration.idleCheckpointDelay + 0.5)
    }

    /// Each query timed alone, in its own read. Its own function (never inlined), like ``rawQueries``, so a
    /// profiler can collect the queries. Valgrind does not demangle Swift, and the mangled name spells this
    /// function `…FullTextWorkloadsV0A7Queries…` ("coffer" substituted), so `'*cofferQueries*'` matches
    /// nothing and `'*0A7Queries*'` also matches its closures (a nested match toggles collection off): give
    /// `--toggle-collect=` the exact name `nm coffer-bench | grep 'FullTextWorkloadsV0A7Queries.*Tf4nnnd_n$'`
    /// prints (raw C: the `…V10rawQueries…CtKFZ` one). `W8-ranked` is most of the instructions either way.
    @inline(never)
    private static func cofferQueries(_ patterns: [FullTextPattern], ranked: Bool, _ database: Database) throws -> [Double] {
        var times: [Double] = []
        for fullText in patterns {
            let start = DispatchTime.now().uptimeNanoseconds
            if ranked {
                let found = try database.read { try BenchChat.search(fullText).limit(20).fetchAll($0) }
                for result in found { _ = result.snippet(maximumCharacters: 40) }
            } else {
                // Prepared once (the README's way for a hot query): each search binds its match text.
                let page = try pageQuery.get()
                _ = try database.read { try page.fetchAll($0, try fullText.matchExpression()) }
            }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return times
    }

    /// The first 50 rows matching a match text given at each run, rendered to SQL once.
    private static let pageQuery = Result { try BenchChat.matching(.parameter).limit(50).prepared() }

    private static let rawPageSQL = """
        SELECT chat.id, chat.conversationID, chat.sender, chat.body
        FROM chat_fts JOIN chat ON chat.rowid = chat_fts.docid WHERE chat_fts MATCH ? LIMIT 50
        """
    private static let rawRankedSQL = """
        SELECT chat.id, chat.conversationID, chat.sender, chat.body,
        coffer_bm25(matchinfo(chat_fts, 'pcnalx')) AS r, snippet(chat_fts, '[', ']', '…', -1, 10)
        FROM chat_fts JOIN chat ON chat.rowid = chat_fts.docid WHERE chat_fts MATCH ? ORDER BY r DESC LIMIT 20
        """

    /// Transactions of 1,000 rows through `insertAll`. Its own function (never inlined), like
    /// ``rawIndex(_:_:)``, so a profiler can collect the indexing phase alone.
    @inline(never)
    private static func cofferIndex(_ messages: [ChatGenerator.Message], _ database: Database) throws {
        for start in stride(from: 0, to: messages.count, by: 1_000) {
            let rows = messages[start..<min(start + 1_000, messages.count)].lazy.map {
                BenchChat(id: nil, conversationID: $0.conversation, sender: $0.sender, body: $0.body)
            }
            _ = try database.write { db in try BenchChat.insertAll(rows, db) }
        }
    }

    @inline(never)
    private static func rawIndex(_ messages: [ChatGenerator.Message], _ connection: RawConnection) throws {
        connection.exec(
            "CREATE TABLE chat(id INTEGER PRIMARY KEY, conversationID INTEGER NOT NULL, sender TEXT NOT NULL, body TEXT NOT NULL)"
        )
        connection.exec("CREATE VIRTUAL TABLE chat_fts USING fts4(content=\"chat\", body, sender, tokenize=coffer)")
        let insert = try connection.prepare("INSERT INTO chat(conversationID, sender, body) VALUES (?, ?, ?)")
        let index = try connection.prepare("INSERT INTO chat_fts(docid, body, sender) VALUES (?, ?, ?)")
        defer {
            sqlite3_finalize(insert)
            sqlite3_finalize(index)
        }
        for start in stride(from: 0, to: messages.count, by: 1_000) {
            connection.exec("BEGIN IMMEDIATE")
            for message in messages[start..<min(start + 1_000, messages.count)] {
                sqlite3_bind_int64(insert, 1, message.conversation)
                try RawConnection.withStaticText([message.sender, message.body], from: 2, on: insert) {
                    try connection.step(insert, expecting: SQLITE_DONE)
                }
                sqlite3_reset(insert)
                sqlite3_bind_int64(index, 1, sqlite3_last_insert_rowid(connection.handle))
                try RawConnection.withStaticText([message.body, message.sender], from: 2, on: index) {
                    try connection.step(index, expecting: SQLITE_DONE)
                }
                sqlite3_reset(index)
            }
            connection.exec("COMMIT")
        }
    }

    /// Each query timed alone: bind, step through the rows, reset. Each row becomes a `BenchChat` read by
    /// pointer and byte count, as every raw read workload reads its rows (`Person(statement:)`), so both
    /// sides end with the same values; a ranked row adds its rank and `snippet()` text.
    @inline(never)
    private static func rawQueries(_ patterns: [String], ranked: Bool, _ connection: RawConnection) throws -> [Double] {
        let statement = try connection.prepare(ranked ? rawRankedSQL : rawPageSQL)
        defer { sqlite3_finalize(statement) }
        return try QueryTiming.rawQueries(patterns, on: statement, connection, label: "W8") { statement in
            (
                BenchChat(statement: statement),
                ranked ? (sqlite3_column_double(statement, 4), rawText(statement, 5)) : nil
            )
        }
    }

    /// A text column by pointer and byte count (text before its byte count, as SQLite asks).
    static func rawText(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    /// The index's size (its segments) against the text it indexes, and how many segments, on standard error.
    private static func reportSize(_ handle: OpaquePointer, _ impl: Implementation) {
        func value(_ sql: String) -> Double { QueryTiming.value(handle, sql) }
        let content = value("SELECT total(length(CAST(body AS BLOB)) + length(CAST(sender AS BLOB))) FROM chat")
        let index = QueryTiming.indexBytes(handle, table: "chat_fts")
        let segments = value("SELECT count(*) FROM chat_fts_segdir")
        let levels = value("SELECT count(DISTINCT level) FROM chat_fts_segdir")
        FileHandle.standardError.write(
            Data(
                String(
                    format: "W8 %@: index %.1f MB for %.1f MB of text (%.2f×), %.0f segments on %.0f levels\n",
                    impl.rawValue, index / 1e6, content / 1e6, index / max(content, 1), segments, levels
                ).utf8))
    }
}
