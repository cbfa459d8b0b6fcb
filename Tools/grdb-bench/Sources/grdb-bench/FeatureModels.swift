import Foundation

/// The sizes of W8–W10, coffer-bench's (`main.swift` there).
struct FeatureSizes {
    let messages: Int
    let queries: Int
    let commits: Int
    let observations = 100
    let authors = 1_000
    let booksPerAuthor = 20
    let pages: Int
    let lookups: Int

    init(quick: Bool) {
        messages = quick ? 20_000 : 200_000
        queries = quick ? 200 : 1_000
        commits = quick ? 500 : 2_000
        pages = quick ? 50 : 1_000
        lookups = quick ? 1_000 : 50_000
    }

    static let pageSize = 100

    /// W10's page offsets and looked-up author ids, as coffer-bench draws them.
    var offsets: [Int64] { (0..<pages).map { Int64($0 * Self.pageSize % max(authors - Self.pageSize + 1, 1)) } }
    var authorIDs: [Int64] { (0..<lookups).map { Int64($0 * 7 % authors + 1) } }
}

/// SQL both sides of W8 and W10 share.
enum FeatureSQL {
    static let chat =
        "CREATE TABLE chat(id INTEGER PRIMARY KEY, conversationID INTEGER NOT NULL, sender TEXT NOT NULL, body TEXT NOT NULL)"
    /// The first 50 rows matching a match text, in index order (coffer-bench's raw page query).
    static let page = """
        SELECT chat.id, chat.conversationID, chat.sender, chat.body
        FROM chat_fts JOIN chat ON chat.rowid = chat_fts.docid WHERE chat_fts MATCH ? LIMIT 50
        """
    static let optimize = "INSERT INTO chat_fts(chat_fts) VALUES ('optimize')"
    static let other = "CREATE TABLE other(id INTEGER PRIMARY KEY, v INTEGER)"

    /// W10's checksum, coffer-bench's: ids, name length, book ids and years.
    static func shelfChecksum(_ id: Int64, _ name: String, _ books: [(Int64, Int64)]) -> Int64 {
        books.reduce(id &* 31 &+ Int64(name.utf8.count)) { $0 &* 17 &+ $1.0 &+ $1.1 }
    }
}

/// Seconds `body` takes.
func timed(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// When each W9 observation last received which count.
final class DeliveryTracker: @unchecked Sendable {
    private let condition = NSCondition()
    private var counts: [Int]

    init(observations: Int) { counts = Array(repeating: -1, count: observations) }

    func delivered(_ index: Int, _ count: Int) {
        condition.withLock {
            counts[index] = count
            condition.broadcast()
        }
    }

    /// Waits until every observation received `count`.
    func waitAll(count: Int) {
        condition.withLock { while counts.contains(where: { $0 < count }) { condition.wait() } }
    }
}
