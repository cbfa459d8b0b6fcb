/// The subscribers of an ``ObservationCenter``, indexed by the tables each one wants to hear about, so
/// that a commit costs only the subscribers it may concern: one that touched table `t` visits those that
/// follow every commit and those that named `t`, never the others. Not thread-safe (the center's lock
/// guards it).
struct ObservationSubscribers {
    typealias Subscriber = @Sendable (DatabaseChangeSet) -> Void

    struct Entry {
        let demand: ObservationDemand
        let subscriber: Subscriber
        let onClose: (@Sendable () -> Void)?
        /// Lower-cased names of the tables whose commits this subscriber is told of; nil: every commit.
        var tables: Set<String>?
    }

    private var entries: [Int: Entry] = [:]
    /// Ids (ascending: subscription order) of the subscribers told of every commit.
    private var everyCommit: [Int] = []
    /// Per lower-cased table name, the ids (ascending) of the subscribers that named it.
    private var byTable: [String: [Int]] = [:]

    var count: Int { entries.count }

    /// Adds subscriber `id`, which must be greater than every id added before.
    mutating func insert(_ id: Int, _ entry: Entry) {
        entries[id] = entry
        index(id, entry.tables)
    }

    /// Removes subscriber `id`, returning it.
    @discardableResult
    mutating func remove(_ id: Int) -> Entry? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        unindex(id, entry.tables)
        return entry
    }

    /// Changes which commits subscriber `id` is told of (lower-cased names; nil: every commit).
    mutating func setTables(_ tables: Set<String>?, for id: Int) {
        guard let entry = entries[id], entry.tables != tables else { return }
        unindex(id, entry.tables)
        entries[id]?.tables = tables
        index(id, tables)
    }

    /// The lower-cased names of the tables some subscriber is told of; nil when one is told of every commit.
    var followedTables: Set<String>? { everyCommit.isEmpty ? Set(byTable.keys) : nil }

    /// Every subscriber, in subscription order.
    var all: [Entry] { entries.keys.sorted().compactMap { entries[$0] } }

    /// The subscribers `changes` may concern, in subscription order: all of them for a commit that may
    /// have changed anything; otherwise those told of every commit and those that named a changed table.
    func subscribers(for changes: DatabaseChangeSet) -> [Subscriber] {
        if changes.isWholeDatabase { return all.map(\.subscriber) }
        var ids = everyCommit
        var sorted = true
        for table in changes.lowercasedTables {
            guard let named = byTable[table] else { continue }
            if ids.isEmpty {
                ids = named
            } else {
                ids += named
                sorted = false
            }
        }
        if !sorted { ids = Array(Set(ids)).sorted() }
        return ids.compactMap { entries[$0]?.subscriber }
    }

    private mutating func index(_ id: Int, _ tables: Set<String>?) {
        guard let tables else { return Self.insertSorted(id, into: &everyCommit) }
        for table in tables { Self.insertSorted(id, into: &byTable[table, default: []]) }
    }

    private mutating func unindex(_ id: Int, _ tables: Set<String>?) {
        guard let tables else { return Self.removeSorted(id, from: &everyCommit) }
        for table in tables {
            Self.removeSorted(id, from: &byTable[table, default: []])
            if byTable[table]?.isEmpty == true { byTable[table] = nil }
        }
    }

    private static func insertSorted(_ id: Int, into ids: inout [Int]) {
        let position = ids.partitioningIndex { $0 >= id }
        if position == ids.endIndex || ids[position] != id { ids.insert(id, at: position) }
    }

    private static func removeSorted(_ id: Int, from ids: inout [Int]) {
        let position = ids.partitioningIndex { $0 >= id }
        if position != ids.endIndex && ids[position] == id { ids.remove(at: position) }
    }
}

extension Array {
    /// The first index whose element satisfies `belongsInSecondPart` (the elements must be partitioned by
    /// it: false for a prefix, true after), by binary search.
    fileprivate func partitioningIndex(where belongsInSecondPart: (Element) -> Bool) -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if belongsInSecondPart(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
