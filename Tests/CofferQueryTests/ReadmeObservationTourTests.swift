import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The "Observation" tour (Observation.md, "In brief", since the README became a front page), compiled and
/// run: an observation drives a list (callback
/// on the main queue) and a count (async sequence).
final class ReadmeObservationTourTests: XCTestCase {
    @MainActor
    func testTheObservationTourRunsAsWritten() async throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("tour.db"), configuration: Configuration(encryption: .passphrase("pw")))
        _ = try await database.write { db in try db.upgradeSchema(for: [TourMessage.self]) }
        typealias Message = TourMessage
        let shown = ObservedTourValues<[String]>()
        let badge = ObservedTourValues<Int>()
        let show: @Sendable ([Message]) -> Void = { messages in shown.append(messages.map(\.body)) }

        // Observation.md: In brief
        let chat = database.observe({ db in
            try Message.filter { $0.conversationID == 1 }.order { $0.id.desc }.fetchAll(db)
        }) { messages in show(messages) }  // on the main queue; observes while `chat` is kept
        let counting = Task {
            for try await unread in database.observe({ db in try Message.filter { $0.score == 0 }.fetchCount(db) }) {
                badge.append(unread)  // badge.text = "\(unread)"
            }
        }
        // Observation.md end

        await shown.wait { $0.last == [] }
        await badge.wait { $0.last == 0 }
        try await database.write { db in
            var message = Message(id: nil, conversationID: 1, body: "hello", score: 0)
            try message.insert(db)
        }
        await shown.wait { $0.last == ["hello"] }
        await badge.wait { $0.last == 1 }
        try await database.write { db in
            var message = Message(id: nil, conversationID: 2, body: "elsewhere", score: 0)
            try message.insert(db)
        }
        await badge.wait { $0.last == 2 }
        chat.cancel()
        counting.cancel()
        // `[Message]` is not Equatable: the commit in conversation 2 re-delivers the same list.
        XCTAssertEqual(shown.values.first, [])
        XCTAssertEqual(Set(shown.values.dropFirst()), [["hello"]])
    }
}

/// Values collected on the main actor, awaited without blocking it (the callbacks run on the main queue).
@MainActor final class ObservedTourValues<Value: Equatable & Sendable>: Sendable {
    private(set) var values: [Value] = []
    private var waiters: [(predicate: ([Value]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    nonisolated func append(_ value: Value) {
        Task { @MainActor in
            self.values.append(value)
            let ready = self.waiters.filter { $0.predicate(self.values) }
            self.waiters.removeAll { $0.predicate(self.values) }
            ready.forEach { $0.continuation.resume() }
        }
    }

    func wait(until predicate: @escaping ([Value]) -> Bool) async {
        if predicate(values) { return }
        await withCheckedContinuation { waiters.append((predicate, $0)) }
    }
}
