import Foundation
import GRDB

/// A W8 chat message, an idiomatic GRDB record of the content table `chat`.
struct Chat: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "chat"
    var id: Int64?
    var conversationID: Int64
    var sender: String
    var body: String

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A W10 author and its books.
struct Author: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "author"
    static let books = hasMany(Book.self)
    var id: Int64
    var name: String

    var books: QueryInterfaceRequest<Book> { request(for: Author.books) }
}

struct Book: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "book"
    static let author = belongsTo(Author.self)
    var id: Int64
    var authorID: Int64
    var title: String
    var year: Int64
}

/// A page row of W10-including: an author with all its books.
struct AuthorInfo: Decodable, FetchableRecord {
    var author: Author
    var books: [Book]
}

/// W8–W10 and W15 with GRDB as its documentation teaches them: FTS4 synchronized with its content table
/// and `FTS3Pattern`, `ValueObservation` on a `DatabasePool`, `hasMany`/`belongsTo` with `including(all:)`,
/// a `DatabaseMigrator`.
struct GRDBFeatureWorkloads {
    let base: GRDBWorkloads
    let sizes: FeatureSizes

    /// W8-index: the content table and its FTS4 index (`unicode61`, kept by GRDB's triggers), filled in
    /// transactions of 1,000 records.
    func index(_ messages: [ChatGenerator.Message], _ pool: DatabasePool) throws {
        try pool.write { db in
            try db.execute(sql: FeatureSQL.chat)
            try db.create(virtualTable: "chat_fts", using: FTS4()) { t in
                t.synchronize(withTable: "chat")
                t.tokenizer = .unicode61()
                t.column("body")
                t.column("sender")
            }
        }
        for start in stride(from: 0, to: messages.count, by: 1_000) {
            try pool.write { db in
                for message in messages[start..<min(start + 1_000, messages.count)] {
                    var chat = Chat(id: nil, conversationID: message.conversation, sender: message.sender, body: message.body)
                    try chat.insert(db)
                }
            }
        }
    }

    /// W8's queries, each its own read and timed alone: the page query prepared once (a cached
    /// `SQLRequest`, GRDB's way to join an external-content index), each search binding its pattern.
    func search(_ patterns: [FTS3Pattern], _ pool: DatabasePool) throws -> (times: [Double], rows: Int64) {
        var times: [Double] = []
        var rows: Int64 = 0
        for pattern in patterns {
            var page: [Chat] = []
            times.append(
                try timed {
                    page = try pool.read { db in
                        try SQLRequest<Chat>(sql: FeatureSQL.page, arguments: [pattern], cached: true).fetchAll(db)
                    }
                })
            rows += Int64(page.count)
        }
        return (times, rows)
    }

    /// W9: a pool on a fresh file with `person` and `other`, and `sizes.observations` observations of
    /// `table` (none when nil), each with its own SQL; returns once each delivered its first value.
    func observedPool(_ path: String, observing table: String?) throws -> (DatabasePool, [AnyDatabaseCancellable]) {
        let pool = try base.openPool(path)
        try pool.write { db in
            try db.execute(sql: BenchRow.schema)
            try db.execute(sql: FeatureSQL.other)
        }
        guard let table else { return (pool, []) }
        let tracker = DeliveryTracker(observations: sizes.observations)
        let queue = DispatchQueue(label: "w9-delivery")
        let cancellables = (0..<sizes.observations).map { index in
            let sql = "SELECT count(*) + \(index) FROM \(table)"
            return ValueObservation.tracking { db in try Int.fetchOne(db, sql: sql) ?? 0 }
                .start(in: pool, scheduling: .async(onQueue: queue), onError: { _ in }) { value in
                    tracker.delivered(index, value - index)
                }
        }
        tracker.waitAll(count: 0)
        return (pool, cancellables)
    }

    /// W9's commits: one record per write.
    func commit(_ rows: ArraySlice<BenchRow>, _ pool: DatabasePool) throws {
        for row in rows { try pool.write { db in try Person(row).insert(db) } }
    }

    /// W10's file: the authors and their books in one transaction (untimed).
    func fillShelf(_ pool: DatabasePool) throws {
        try pool.write { db in
            try db.create(table: "author") { t in
                t.primaryKey("id", .integer)
                t.column("name", .text).notNull()
            }
            try db.create(table: "book") { t in
                t.primaryKey("id", .integer)
                t.column("authorID", .integer).notNull().indexed().references("author", onDelete: .cascade)
                t.column("title", .text).notNull()
                t.column("year", .integer).notNull()
            }
            var bookID: Int64 = 0
            for n in 1...Int64(sizes.authors) {
                try Author(id: n, name: "author \(n)").insert(db)
                for k in 0..<Int64(sizes.booksPerAuthor) {
                    bookID += 1
                    try Book(id: bookID, authorID: n, title: "book \(n).\(k)", year: 1950 + (n + k) % 70).insert(db)
                }
            }
        }
    }

    /// W10-including: each page of authors with all their books, one read each.
    func pages(_ offsets: [Int64], _ pool: DatabasePool) throws -> Int64 {
        var sum: Int64 = 0
        for offset in offsets {
            let page = try pool.read { db in
                try Author.order(Column("id")).limit(FeatureSizes.pageSize, offset: Int(offset))
                    .including(all: Author.books).asRequest(of: AuthorInfo.self).fetchAll(db)
            }
            for info in page {
                sum &+= FeatureSQL.shelfChecksum(info.author.id, info.author.name, info.books.map { ($0.id, $0.year) })
            }
        }
        return sum
    }

    /// W10-lazy: each (already loaded) author's books by its association request, one read each.
    func books(of authors: [Author], _ pool: DatabasePool) throws -> Int64 {
        var sum: Int64 = 0
        for author in authors {
            let books = try pool.read { db in try author.books.fetchAll(db) }
            sum &+= FeatureSQL.shelfChecksum(author.id, "", books.map { ($0.id, $0.year) })
        }
        return sum
    }

    /// W15-migrate: a `DatabaseMigrator` with W15's two migrations (raw SQL, each `execute(sql:)`), run
    /// once on the pool: each migration in its own transaction, recorded in `grdb_migrations`.
    func migrate(_ pool: DatabasePool) throws {
        var migrator = DatabaseMigrator()
        for (name, statements) in MigrationSQL.migrations {
            migrator.registerMigration(name) { db in
                for sql in statements { try db.execute(sql: sql) }
            }
        }
        try migrator.migrate(pool)
    }

    /// W15's checksum of the migrated table (untimed).
    func migrationChecksum(_ pool: DatabasePool) throws -> Int64 {
        try pool.read { db in
            guard let sums = try Row.fetchOne(db, sql: MigrationSQL.sums) else { throw BenchError("W15: no sums") }
            return try MigrationSQL.checksum(
                count: sums[0], score: sums[1], nameBytes: sums[2],
                columns: try Row.fetchAll(db, sql: MigrationSQL.columns).map { $0["name"] },
                indexes: try Row.fetchAll(db, sql: MigrationSQL.indexes).map { $0["name"] })
        }
    }
}
