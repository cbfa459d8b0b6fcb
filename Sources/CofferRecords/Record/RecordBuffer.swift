import CofferEngine

/// Collects fetched records and hands them over as one array.
///
/// In Coffer's generic fetch code, which runs unspecialized for a client's record type, `Array.append`
/// looks up the metadata of `Array<Record>` on every call (about 330 instructions a row in
/// `coffer-bench` W3, more than decoding an integer column). This buffer grows raw storage, which needs
/// only the record type's own value witnesses, and builds the array once.
final class RecordBuffer<Record> {
    // Used by one fetch on one thread: no dynamic exclusivity checks on every row.
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<Record>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int = 16) {
        self.capacity = max(capacity, 1)
        storage = .allocate(capacity: self.capacity)
    }

    deinit {
        storage.deinitialize(count: count)
        storage.deallocate()
    }

    /// Adds `record` at the end, moved in (a copy would retain each of its references and release them
    /// again when the caller's value goes away).
    func append(_ record: consuming Record) {
        if count == capacity {
            let larger = UnsafeMutablePointer<Record>.allocate(capacity: capacity * 2)
            larger.moveInitialize(from: storage, count: count)
            storage.deallocate()
            storage = larger
            capacity *= 2
        }
        (storage + count).initialize(to: consume record)
        count += 1
    }

    /// The records in the order appended, moved out: the buffer is empty afterwards.
    func takeArray() -> [Record] {
        let taken = count
        guard taken > 0 else { return [] }
        count = 0
        return Array(unsafeUninitializedCapacity: taken) { destination, initialized in
            guard let base = destination.baseAddress else {
                // Only an empty array has no storage, and the buffer is not empty here.
                initialized = 0
                return
            }
            base.moveInitialize(from: storage, count: taken)
            initialized = taken
        }
    }

    /// The records moved out into one array per slot, each in the order appended: `slots[i]` is the slot
    /// of the `i`th record (-1, or no entry, drops it). Each array is allocated once at its size, and no
    /// record is copied (a copy would retain each of its references, and destroying the buffer's
    /// records release them again). The buffer is empty afterwards.
    func takeGrouped(bySlot slots: [Int], slotCount: Int) -> [[Record]] {
        let taken = count
        count = 0
        // Each slot's records' positions, one slot after another: the slot's start in `positions`, then
        // its count.
        var starts = [Int](repeating: 0, count: slotCount + 1)
        for position in 0..<taken where position < slots.count && slots[position] >= 0 { starts[slots[position] + 1] += 1 }
        for slot in 0..<slotCount { starts[slot + 1] += starts[slot] }
        var positions = [Int](repeating: 0, count: starts[slotCount])
        var filled = starts
        for position in 0..<taken {
            let slot = position < slots.count ? slots[position] : -1
            if slot < 0 {
                (storage + position).deinitialize(count: 1)
            } else {
                positions[filled[slot]] = position
                filled[slot] += 1
            }
        }
        return [[Record]](unsafeUninitializedCapacity: slotCount) { groups, initialized in
            for slot in 0..<slotCount {
                let start = starts[slot]
                let size = starts[slot + 1] - start
                groups.initializeElement(
                    at: slot,
                    to: [Record](unsafeUninitializedCapacity: size) { group, count in
                        count = 0
                        guard let base = group.baseAddress else { return }
                        // By runs of consecutive positions, one bulk move each: a slot's records usually
                        // come together (the associated rows in key order), and moving one record at a
                        // time goes through its type's value witnesses in this unspecialized code.
                        while count < size {
                            let first = positions[start + count]
                            var run = 1
                            while count + run < size, positions[start + count + run] == first + run { run += 1 }
                            (base + count).moveInitialize(from: storage + first, count: run)
                            count += run
                        }
                    })
            }
            initialized = slotCount
        }
    }
}
