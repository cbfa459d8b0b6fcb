import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The configuration of ``articleDatabase(_:)``'s databases.
let articleConfiguration = Configuration(encryption: .passphrase("correct horse battery staple"))

/// An encrypted database in a fresh temporary directory: what the articles' examples call `database`.
/// Keep the directory alive as long as the database.
func articleDatabase(_ name: String = "app.db") throws -> (TemporaryDirectory, Database) {
    let directory = try TemporaryDirectory("coffer-docs")
    let database = try Database(path: directory.path(name), configuration: articleConfiguration)
    return (directory, database)
}

/// What an example's callbacks received, in order (they may run on other threads).
final class Received<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Value] = []

    func append(_ value: Value) {
        lock.lock()
        stored.append(value)
        lock.unlock()
    }

    var values: [Value] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    /// Waits up to `timeout` seconds for `condition` to hold of the values, spinning the main run loop
    /// (callbacks delivered on the main queue run there).
    func wait(timeout: TimeInterval = 10, until condition: ([Value]) -> Bool) -> [Value] {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(values), Date() < deadline {
            RunLoop.current.run(until: Date().addingTimeInterval(0.01))
        }
        return values
    }

    /// ``wait(timeout:until:)`` for async tests: sleeps instead of blocking the thread.
    func settle(timeout: TimeInterval = 10, until condition: ([Value]) -> Bool) async -> [Value] {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(values), Date() < deadline {
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return values
    }
}

/// A test case whose tests run inside a fresh temporary directory, for examples that use relative paths
/// (`"app.db"`, `"backups"`) as an app's code would.
class InTemporaryDirectoryTestCase: XCTestCase {
    private var directory: TemporaryDirectory?
    private var previousDirectory = ""

    override func setUpWithError() throws {
        let directory = try TemporaryDirectory("coffer-docs")
        self.directory = directory
        previousDirectory = FileManager.default.currentDirectoryPath
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath(directory.url.path))
    }

    override func tearDown() {
        _ = FileManager.default.changeCurrentDirectoryPath(previousDirectory)
        directory = nil
    }
}
