import Foundation
import GRDBSQLite

extension RawConnection {
    /// Runs `sql` (one or more statements), throwing SQLite's message on failure.
    func execute(_ sql: String) throws {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw BenchError("\(code): \(String(cString: sqlite3_errmsg(handle)))") }
    }

    func inReadTransaction<T>(_ body: () throws -> T) rethrows -> T {
        exec("BEGIN")
        defer { exec("COMMIT") }
        return try body()
    }

    /// Binds `texts` to parameters `first`, `first + 1`, … `SQLITE_STATIC` with their byte counts, straight
    /// from the strings' storage, for the duration of `body`.
    static func withStaticText<T>(
        _ texts: [String], from first: Int32, on statement: OpaquePointer, _ body: () throws -> T
    ) rethrows -> T {
        guard let head = texts.first else { return try body() }
        var text = head
        return try text.withUTF8 { bytes in
            _ = bytes.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(statement, first, $0.baseAddress, Int32($0.count), nil)
            }
            return try withStaticText(Array(texts.dropFirst()), from: first + 1, on: statement, body)
        }
    }

    /// A text column by pointer and byte count.
    static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }
}

/// W8, W10 and W15 in raw C, as coffer-bench's raw twins do them (W9 has none: no observation in C).
struct RawFeatureWorkloads {
    struct ChatRow {
        let id: Int64
        let conversationID: Int64
        let sender: String
        let body: String
    }

    struct BookRow {
        let id: Int64
        let authorID: Int64
        let title: String
        let year: Int64
    }

    /// W8-index: the same tables (`tokenize=unicode61`), the content table and the index written by two
    /// prepared statements (no triggers), in transactions of 1,000.
    static func index(_ messages: [ChatGenerator.Message], _ connection: RawConnection) throws {
        connection.exec(FeatureSQL.chat)
        connection.exec("CREATE VIRTUAL TABLE chat_fts USING fts4(content=\"chat\", body, sender, tokenize=unicode61)")
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

    /// W8's queries, each timed alone on one prepared statement: bind, step through the rows (each read
    /// by pointer and byte count), reset.
    static func search(_ patterns: [String], _ connection: RawConnection) throws -> (times: [Double], rows: Int64) {
        let statement = try connection.prepare(FeatureSQL.page)
        defer { sqlite3_finalize(statement) }
        var times: [Double] = []
        var rows: Int64 = 0
        for pattern in patterns {
            var page: [ChatRow] = []
            var code: Int32 = SQLITE_OK
            times.append(
                timed {
                    code = RawConnection.withStaticText([pattern], from: 1, on: statement) { () -> Int32 in
                        var code = sqlite3_step(statement)
                        while code == SQLITE_ROW {
                            page.append(
                                ChatRow(
                                    id: sqlite3_column_int64(statement, 0), conversationID: sqlite3_column_int64(statement, 1),
                                    sender: RawConnection.text(statement, 2), body: RawConnection.text(statement, 3)))
                            code = sqlite3_step(statement)
                        }
                        return code
                    }
                    sqlite3_reset(statement)
                })
            guard code == SQLITE_DONE else { throw BenchError("W8: \(String(cString: sqlite3_errmsg(connection.handle)))") }
            rows += Int64(page.count)
        }
        return (times, rows)
    }

    /// W10-including: each page's authors, then their books in one `IN` query, stitched by author id.
    static func pages(_ offsets: [Int64], _ connection: RawConnection) throws -> Int64 {
        let authorsPage = try connection.prepare("SELECT id, name FROM author ORDER BY id LIMIT ? OFFSET ?")
        let marks = Array(repeating: "?", count: FeatureSizes.pageSize).joined(separator: ", ")
        let booksOfAuthors = try connection.prepare("SELECT id, authorID, title, year FROM book WHERE authorID IN (\(marks))")
        defer {
            sqlite3_finalize(authorsPage)
            sqlite3_finalize(booksOfAuthors)
        }
        var sum: Int64 = 0
        for offset in offsets {
            let page = connection.inReadTransaction { () -> [(Int64, String, [BookRow])] in
                var authors: [(Int64, String)] = []
                sqlite3_bind_int64(authorsPage, 1, Int64(FeatureSizes.pageSize))
                sqlite3_bind_int64(authorsPage, 2, offset)
                while sqlite3_step(authorsPage) == SQLITE_ROW {
                    authors.append((sqlite3_column_int64(authorsPage, 0), RawConnection.text(authorsPage, 1)))
                }
                sqlite3_reset(authorsPage)
                guard !authors.isEmpty else { return [] }
                for index in 0..<FeatureSizes.pageSize {
                    sqlite3_bind_int64(booksOfAuthors, Int32(index + 1), authors[min(index, authors.count - 1)].0)
                }
                var books: [Int64: [BookRow]] = [:]
                while sqlite3_step(booksOfAuthors) == SQLITE_ROW {
                    let book = Self.book(booksOfAuthors)
                    books[book.authorID, default: []].append(book)
                }
                sqlite3_reset(booksOfAuthors)
                return authors.map { ($0.0, $0.1, books[$0.0] ?? []) }
            }
            for (id, name, books) in page { sum &+= FeatureSQL.shelfChecksum(id, name, books.map { ($0.id, $0.year) }) }
        }
        return sum
    }

    /// W10-lazy: each author's books by its single `WHERE authorID = ?` query, one read each.
    static func books(of authorIDs: [Int64], _ connection: RawConnection) throws -> Int64 {
        let booksOfAuthor = try connection.prepare("SELECT id, authorID, title, year FROM book WHERE authorID = ?")
        defer { sqlite3_finalize(booksOfAuthor) }
        var sum: Int64 = 0
        for id in authorIDs {
            let books = connection.inReadTransaction { () -> [BookRow] in
                var books: [BookRow] = []
                sqlite3_bind_int64(booksOfAuthor, 1, id)
                while sqlite3_step(booksOfAuthor) == SQLITE_ROW { books.append(Self.book(booksOfAuthor)) }
                sqlite3_reset(booksOfAuthor)
                return books
            }
            sum &+= FeatureSQL.shelfChecksum(id, "", books.map { ($0.id, $0.year) })
        }
        return sum
    }

    /// W15's file: `person` and its `rows` rows, in one transaction (untimed).
    static func fillPeople(_ path: String, rows: Int, cacheKiB: Int) throws {
        let connection = try RawConnection(path: path, cacheKiB: cacheKiB)
        try connection.execute("BEGIN IMMEDIATE; \(MigrationSQL.schema); \(MigrationSQL.fill(rows: rows)); COMMIT")
    }

    /// W15-migrate: each migration's statements by `sqlite3_exec` in one `BEGIN IMMEDIATE` transaction,
    /// recorded in `PRAGMA user_version` (2, then 3), as a hand-written C migration does.
    static func migrate(_ connection: RawConnection) throws {
        for (version, (_, statements)) in zip(2..., MigrationSQL.migrations) {
            try connection.execute("BEGIN IMMEDIATE")
            do {
                for sql in statements { try connection.execute(sql) }
                try connection.execute("PRAGMA user_version = \(version)")
                try connection.execute("COMMIT")
            } catch {
                connection.exec("ROLLBACK")
                throw error
            }
        }
    }

    /// W15's checksum of the migrated table (untimed).
    static func migrationChecksum(_ connection: RawConnection) throws -> Int64 {
        func texts(_ sql: String, column: Int32) throws -> [String] {
            let statement = try connection.prepare(sql)
            defer { sqlite3_finalize(statement) }
            var texts: [String] = []
            while sqlite3_step(statement) == SQLITE_ROW { texts.append(RawConnection.text(statement, column)) }
            return texts
        }
        let sums = try connection.prepare(MigrationSQL.sums)
        defer { sqlite3_finalize(sums) }
        try connection.step(sums, expecting: SQLITE_ROW)
        return try MigrationSQL.checksum(
            count: sqlite3_column_int64(sums, 0), score: sqlite3_column_int64(sums, 1), nameBytes: sqlite3_column_int64(sums, 2),
            columns: try texts(MigrationSQL.columns, column: 1), indexes: try texts(MigrationSQL.indexes, column: 1))
    }

    static func book(_ statement: OpaquePointer) -> BookRow {
        BookRow(
            id: sqlite3_column_int64(statement, 0), authorID: sqlite3_column_int64(statement, 1),
            title: RawConnection.text(statement, 2), year: sqlite3_column_int64(statement, 3))
    }
}
