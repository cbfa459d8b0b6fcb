import CofferEngine
import CofferRecords
import Foundation

/// Shares one decoded-object cache (and one access log) between all live ``KeyValueStore`` instances
/// that open the same named store on the same ``Database``, so a write through any of them invalidates
/// what the others cached.
///
/// Entries are keyed by the database's object identity. That is safe although identities are reused
/// after deallocation: an entry is only found while its cache is alive, the cache is only alive while a
/// store holds it, and that store holds its database, so the identity still names the same database.
final class KeyValueStoreRegistry: @unchecked Sendable {
    static let shared = KeyValueStoreRegistry()

    private struct Key: Hashable {
        let database: ObjectIdentifier
        /// The store name's UTF-8 bytes: table names are byte strings, Swift string equality is not.
        let name: [UInt8]
    }

    private struct Entry {
        weak var cache: DecodedObjectCache?
        weak var state: KeyValueStoreState?
    }

    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]

    /// The cache and state of store `name` in `database`, created (with `costLimit`) if no live store
    /// has them; a later instance shares the first one's cache and its cost limit.
    func resources(database: Database, name: String, costLimit: Int) -> (DecodedObjectCache, KeyValueStoreState) {
        let key = Key(database: ObjectIdentifier(database), name: Array(name.utf8))
        return lock.withLock {
            if let entry = entries[key], let cache = entry.cache, let state = entry.state {
                return (cache, state)
            }
            entries = entries.filter { $0.value.cache != nil }
            let cache = DecodedObjectCache(costLimit: costLimit)
            let state = KeyValueStoreState()
            entries[key] = Entry(cache: cache, state: state)
            return (cache, state)
        }
    }
}
