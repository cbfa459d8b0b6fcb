import CofferEngine
import Dispatch
import Foundation

extension Database {
    /// Observes the value `fetch` reads: delivers it on `queue` at start, then again after every commit
    /// that changed a table the last fetch read — by this `Database` (the writer's commits, announced in
    /// commit order) or by another process (see ``Configuration/externalChangeLatency``). A rolled-back
    /// transaction notifies nobody.
    ///
    /// ```swift
    /// let handle = database.observe({ db in
    ///     try db.fetchValue(Int.self, sql: "SELECT count(*) FROM message WHERE unread") ?? 0
    /// }) { unread in badge.text = "\(unread)" }
    /// // later: handle.cancel()
    /// ```
    ///
    /// Each value is the database at some commit, read on a reader at or after the commit that triggered
    /// it; values never go back in time, and the last one is the state after the last commit. `queue`
    /// should be serial (the main queue is) for values to arrive in order. The observation runs until
    /// the handle is cancelled or released, or the database closes.
    public func observe<Value: Sendable>(
        options: ObservationOptions = ObservationOptions(), on queue: DispatchQueue = .main,
        _ fetch: @escaping @Sendable (Connection) throws -> Value, onError: @escaping @Sendable (any Error) -> Void = { _ in },
        onChange: @escaping @Sendable (Value) -> Void
    ) -> ObservationHandle {
        observe(options: options, isDuplicate: nil, on: queue, fetch, onError: onError, onChange: onChange)
    }

    /// ``observe(options:on:_:onError:onChange:)`` for `Equatable` values: with
    /// ``ObservationOptions/removesDuplicates`` (the default), a value equal to the last one delivered is
    /// skipped.
    public func observe<Value: Sendable & Equatable>(
        options: ObservationOptions = ObservationOptions(), on queue: DispatchQueue = .main,
        _ fetch: @escaping @Sendable (Connection) throws -> Value, onError: @escaping @Sendable (any Error) -> Void = { _ in },
        onChange: @escaping @Sendable (Value) -> Void
    ) -> ObservationHandle {
        observe(options: options, isDuplicate: { $0 == $1 }, on: queue, fetch, onError: onError, onChange: onChange)
    }

    func observe<Value: Sendable>(
        options: ObservationOptions, isDuplicate: (@Sendable (Value, Value) -> Bool)?, on queue: DispatchQueue,
        snapshot: DatabaseSnapshot? = nil, _ fetch: @escaping @Sendable (Connection) throws -> Value,
        onError: @escaping @Sendable (any Error) -> Void, onChange: @escaping @Sendable (Value) -> Void
    ) -> ObservationHandle {
        let stopped = CancellationFlag()
        let observer = ValueObserver(
            database: self, options: options, isDuplicate: isDuplicate, snapshot: snapshot, fetch: fetch
        ) {
            result, inline in
            let call: @Sendable () -> Void = {
                guard !stopped.isSet else { return }
                switch result {
                case .success(let value): onChange(value)
                case .failure(let error): onError(error)
                }
            }
            if inline { call() } else { queue.async(execute: call) }
        }
        observer.start(synchronously: options.deliversFirstValueSynchronously)
        return ObservationHandle {
            stopped.set()
            observer.cancel()
        }
    }

    /// Observes the value `fetch` reads as an asynchronous sequence: the value at start, then a new one
    /// after every commit that changed what it read (see ``observe(options:on:_:onError:onChange:)``
    /// for the guarantees). A slow consumer gets the newest value; the sequence ends when the task
    /// iterating it is cancelled or the database closes, and throws the first error a fetch throws.
    ///
    /// ```swift
    /// for try await titles in database.observe({ db in
    ///     try db.fetchAll(sql: "SELECT title FROM note ORDER BY title").map { try $0.decode(String.self, at: 0) }
    /// }) {
    ///     show(titles)
    /// }
    /// ```
    public func observe<Value: Sendable>(
        options: ObservationOptions = ObservationOptions(), _ fetch: @escaping @Sendable (Connection) throws -> Value
    ) -> DatabaseObservation<Value> {
        DatabaseObservation(database: self, options: options, isDuplicate: nil, fetch: fetch)
    }

    /// ``observe(options:_:)`` for `Equatable` values, skipping duplicates unless
    /// ``ObservationOptions/removesDuplicates`` is false.
    public func observe<Value: Sendable & Equatable>(
        options: ObservationOptions = ObservationOptions(), _ fetch: @escaping @Sendable (Connection) throws -> Value
    ) -> DatabaseObservation<Value> {
        DatabaseObservation(database: self, options: options, isDuplicate: { $0 == $1 }, fetch: fetch)
    }

    /// What each commit changed in `tables` (all tables when nil), one ``DatabaseChangeSet`` per commit
    /// in commit order, from the moment this is called until the iterating task is cancelled or the
    /// database closes (the sequence then ends). Rows of other tables are left out; a commit that touched none of `tables` is
    /// skipped, except one that may have changed anything (``DatabaseChangeSet/isWholeDatabase``).
    ///
    /// ```swift
    /// for await change in database.changes(in: ["message"]) {
    ///     for row in change.rows where row.kind == .delete { searchIndex.remove(row.rowID) }
    /// }
    /// ```
    public func changes(in tables: [String]? = nil) -> AsyncStream<DatabaseChangeSet> {
        let wanted = tables.map { Set($0.map { $0.lowercased() }) }
        let (stream, continuation) = AsyncStream.makeStream(of: DatabaseChangeSet.self)
        let id = observation.subscribe(.rows, tables: wanted, onClose: { continuation.finish() }) { changes in
            guard let wanted else {
                continuation.yield(changes)
                return
            }
            guard changes.touches(lowercased: wanted) else { return }
            var filtered = changes
            filtered.rows = changes.rows.filter { wanted.contains($0.table.lowercased()) }
            continuation.yield(filtered)
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        let center = observation
        continuation.onTermination = { _ in center.unsubscribe(id) }
        return stream
    }
}

/// An observed value as an `AsyncSequence` (see ``Database/observe(options:_:)``). Each iteration starts
/// its own observation.
public struct DatabaseObservation<Value: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Value

    let database: Database
    let options: ObservationOptions
    let isDuplicate: (@Sendable (Value, Value) -> Bool)?
    let snapshot: DatabaseSnapshot?
    let fetch: @Sendable (Connection) throws -> Value

    init(
        database: Database, options: ObservationOptions, isDuplicate: (@Sendable (Value, Value) -> Bool)?,
        snapshot: DatabaseSnapshot? = nil, fetch: @escaping @Sendable (Connection) throws -> Value
    ) {
        self.database = database
        self.options = options
        self.isDuplicate = isDuplicate
        self.snapshot = snapshot
        self.fetch = fetch
    }

    /// Starts the observation; it stops when the iteration ends.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(1))
        let observer = ValueObserver(
            database: database, options: options, isDuplicate: isDuplicate, snapshot: snapshot, fetch: fetch,
            onClose: { continuation.finish() }
        ) { result, _ in
            switch result {
            case .success(let value): continuation.yield(value)
            case .failure(let error): continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in observer.cancel() }
        observer.start(synchronously: false)
        return Iterator(base: stream.makeAsyncIterator())
    }

    /// Iterates over the observed values.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Value, any Error>.Iterator

        /// The next value, waiting for a commit that changes it; nil once cancelled.
        public mutating func next() async throws -> Value? { try await base.next() }
    }
}

/// Set once, read from any thread.
final class CancellationFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
