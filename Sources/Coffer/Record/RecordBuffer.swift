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
    @exclusivity(unchecked) private var count = 0

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
}
