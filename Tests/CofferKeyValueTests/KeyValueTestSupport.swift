import Coffer
import CofferTestSupport
import Foundation

/// A clock the test moves by hand, so expiry is tested without sleeping.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) { current = start }

    var now: Date { lock.withLock { current } }

    func advance(by interval: TimeInterval) { lock.withLock { current += interval } }

    /// The closure stores take as their `now`.
    var function: @Sendable () -> Date { { self.now } }
}

/// An encrypted database file in a fresh directory, kept alive with the directory.
struct EncryptedFixture {
    static let passphrase = "kv test passphrase"
    let directory: TemporaryDirectory
    let path: String
    let database: Database

    init() throws {
        directory = try TemporaryDirectory("coffer-kv")
        path = directory.path("kv.db")
        database = try Database(path: path, configuration: Self.configuration)
    }

    static var configuration: Coffer.Configuration {
        Coffer.Configuration(encryption: .passphrase(passphrase))
    }

    func reopen() throws -> Database {
        try Database(path: path, configuration: Self.configuration)
    }
}

struct User: Codable, Equatable, Sendable {
    var id: Int
    var name: String
    var tags: [String] = []
}

struct Post: Codable, Equatable, Sendable {
    var id: String
    var publishedAt: Date
    var likes: Int
    var author: String

    static let publishedAt = KeyValueIndexField<Post, Date>("publishedAt") { $0.publishedAt }
    static let likes = KeyValueIndexField<Post, Int>("likes") { $0.likes }
    static let author = KeyValueIndexField<Post, String>("author") { $0.author }
}

struct Download: Codable, Equatable, Sendable {
    var etag: String
    var downloadedAt: Date
}
