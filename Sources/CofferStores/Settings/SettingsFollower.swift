import CofferEngine
import CofferRecords
import Dispatch
import Foundation

/// Hears of commits to a settings table made elsewhere (raw SQL, another `Database`, another process)
/// through the database's change observation, and has the store re-read its table on a queue of its
/// own: the observation calls subscribers on the writer's queue, where a read or the store's write lock
/// could wait on the writer itself.
final class SettingsFollower: @unchecked Sendable {
    private let center: ObservationCenter
    private let table: String
    private let tag: ObjectIdentifier
    private let queue = DispatchQueue(label: "coffer.settings.follower")
    private let lock = NSLock()
    private var subscription: Int?

    /// Follows `table` (its unquoted name); commits tagged `tag` are the store's own and skipped.
    init(database: Database, table: String, tag: ObjectIdentifier) {
        center = database.observation
        self.table = table.lowercased()
        self.tag = tag
    }

    /// Starts calling `refresh` after each foreign commit that may have touched the table.
    func start(_ refresh: @escaping @Sendable () -> Void) {
        let (table, tag, queue) = (self.table, self.tag, self.queue)
        lock.withLock {
            guard subscription == nil else { return }
            subscription = center.subscribe { changes in
                guard !changes.tags.contains(tag), changes.touches(lowercased: [table]) else { return }
                queue.async(execute: refresh)
            }
        }
    }

    /// Stops following (the database's observation stops when nothing else uses it).
    func stop() {
        let id = lock.withLock { () -> Int? in
            defer { subscription = nil }
            return subscription
        }
        id.map(center.unsubscribe)
    }
}
