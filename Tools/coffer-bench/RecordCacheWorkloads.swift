import Coffer
import CofferTestSupport
import Foundation

/// A book of W10's record-cache workloads, looked up by id through SQL (no cache level).
@Table("cache_book") struct RecordCacheBenchBook: Codable, Sendable {
    @Column(primaryKey: true) var id: Int64?
    var authorID: Int64
    var title: String
    var year: Int
}

/// The same table, every record fetched kept in the record cache.
@Table("cache_book") struct RecordCacheBenchCachedBook: Codable, Sendable {
    @Column(primaryKey: true) var id: Int64?
    var authorID: Int64
    var title: String
    var year: Int
}
extension RecordCacheBenchCachedBook: CachedRecord {
    static var recordCache: RecordCacheLevel { .all(costLimit: 64 << 20) }
}

/// W10's record-cache half (Coffer only: raw C has no record cache), on 1,000 authors × 20 books:
///
/// - `W10-fetch-db`: `fetchOne(db, id:)` of random books in one read, through SQL (an uncached type).
/// - `W10-fetch-cached`: the same lookups of a cached type once every book is in its cache (`all`);
///   no SQL runs but the first lookup's snapshot placement.
///
/// After the runs, standard error gets the resident memory per cached record: the RSS growth from
/// filling the cache with all 20,000 books, divided by 20,000.
struct RecordCacheWorkloads {
    let harness: Harness
    let authors = 1_000
    let booksPerAuthor = 20
    let lookups: Int

    func run(_ impl: Implementation) throws -> [Measurement] {
        guard impl == .coffer else { return [] }
        let path = try prepare()
        let bookCount = authors * booksPerAuthor
        var generator = SeededGenerator(seed: 10)
        let ids = (0..<lookups).map { _ in Int64(generator.int(in: 1...bookCount)) }
        var results: [Measurement] = []
        let database = try Database(path: path, configuration: harness.configuration(impl))
        defer { try? database.close() }

        results.append(
            try measure("W10-fetch-db", database, ids) { db, id in try RecordCacheBenchBook.fetchOne(db, id: id)?.year })

        // The first read starts the cache; the next keeps every book.
        let before = ResidentMemory.resetPeak()
        for _ in 0..<2 {
            try database.read { db in for id in 1...Int64(bookCount) { _ = try RecordCacheBenchCachedBook.fetchOne(db, id: id) } }
        }
        if let before, let after = ResidentMemory.current() {
            let perRecord = Double(max(0, after.rssKiB - before) * 1024) / Double(bookCount)
            FileHandle.standardError.write(
                Data("W10 record cache: \(bookCount) books cached, resident memory \(Int(perRecord)) bytes per record\n".utf8))
        }
        results.append(
            try measure("W10-fetch-cached", database, ids) { db, id in
                try RecordCacheBenchCachedBook.fetchOne(db, id: id)?.year
            })
        return results
    }

    /// The median time of looking up every id in one read with `lookUp`, which returns the book's year.
    private func measure(
        _ workload: String, _ database: Database, _ ids: [Int64], _ lookUp: (Connection, Int64) throws -> Int?
    ) throws -> Measurement {
        let seconds = try harness.median(setUp: {}) { _ in
            try database.read { db in
                var years = 0
                for id in ids { years &+= try lookUp(db, id) ?? 0 }
                try check(years, ids)
            }
        }
        return Measurement(workload: workload, impl: "coffer", opsPerSecond: Double(ids.count) / seconds, seconds: seconds)
    }

    /// Both workloads must read the same books: their years' sum is known from the ids.
    private func check(_ years: Int, _ ids: [Int64]) throws {
        let expected = ids.reduce(0) { $0 &+ Self.year(of: $1) }
        guard years == expected else { throw BenchError("W10 lookups read wrong books: \(years) ≠ \(expected)") }
    }

    private static func year(of id: Int64) -> Int { 1950 + Int(id % 70) }

    /// A file with the authors and their books, closed.
    private func prepare() throws -> String {
        let path = harness.freshPath("w10-cache")
        let database = try Database(path: path, configuration: harness.configuration(.coffer))
        try database.write { db in
            try db.executeScript(
                """
                CREATE TABLE cache_author(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE cache_book(id INTEGER PRIMARY KEY, authorID INTEGER NOT NULL REFERENCES cache_author(id),
                    title TEXT NOT NULL, year INTEGER NOT NULL);
                """)
            let author = try db.cachedStatement(sql: "INSERT INTO cache_author(id, name) VALUES (?, ?)")
            let book = try db.cachedStatement(sql: "INSERT INTO cache_book(id, authorID, title, year) VALUES (?, ?, ?, ?)")
            var bookID: Int64 = 0
            for authorID in 1...Int64(authors) {
                try author.execute([authorID, "author \(authorID)"])
                for _ in 0..<booksPerAuthor {
                    bookID += 1
                    try book.execute([bookID, authorID, "book \(bookID) by author \(authorID)", Self.year(of: bookID)])
                }
            }
        }
        try database.close()
        return path
    }
}
