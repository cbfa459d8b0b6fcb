import CofferEngine
import Dispatch

// Observations that start from a snapshot: the first value is the snapshot's state, and no commit made
// after the snapshot is missed (ValueObserver follows its snapshot fetch with one of the current state).

extension Database {
    /// Observes the value `fetch` reads starting from `snapshot` (one of this database's, made by
    /// ``Database/makeSnapshot()``): the first value is read in the snapshot's state, then the observation
    /// follows every commit after it — those made before the observation started included, so no commit
    /// between the snapshot and the live values is missed. A value equal to the last one is skipped (with
    /// ``ObservationOptions/removesDuplicates``, the default). The snapshot is only read once; it can be
    /// closed after the first value.
    ///
    /// ```swift
    /// let snapshot = try database.makeSnapshot()
    /// let report = try snapshot.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
    /// let handle = database.observe(from: snapshot, { db in
    ///     try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") ?? 0
    /// }) { count in print("notes: \(count)") }  // first the report's count, then every later one
    /// ```
    public func observe<Value: Sendable & Equatable>(
        from snapshot: DatabaseSnapshot, options: ObservationOptions = ObservationOptions(),
        on queue: DispatchQueue = .main, _ fetch: @escaping @Sendable (Connection) throws -> Value,
        onError: @escaping @Sendable (any Error) -> Void = { _ in }, onChange: @escaping @Sendable (Value) -> Void
    ) -> ObservationHandle {
        observe(
            options: options, isDuplicate: { $0 == $1 }, on: queue, snapshot: snapshot, fetch, onError: onError,
            onChange: onChange)
    }

    /// ``observe(from:options:on:_:onError:onChange:)`` for values that are not `Equatable`: every fetch is
    /// delivered, the snapshot's and the current state's first.
    public func observe<Value: Sendable>(
        from snapshot: DatabaseSnapshot, options: ObservationOptions = ObservationOptions(),
        on queue: DispatchQueue = .main, _ fetch: @escaping @Sendable (Connection) throws -> Value,
        onError: @escaping @Sendable (any Error) -> Void = { _ in }, onChange: @escaping @Sendable (Value) -> Void
    ) -> ObservationHandle {
        observe(options: options, isDuplicate: nil, on: queue, snapshot: snapshot, fetch, onError: onError, onChange: onChange)
    }

    /// ``observe(from:options:on:_:onError:onChange:)`` as an asynchronous sequence (see
    /// ``observe(options:_:)``: a slow consumer gets the newest value, so it may see the current state
    /// without the snapshot's before it).
    public func observe<Value: Sendable & Equatable>(
        from snapshot: DatabaseSnapshot, options: ObservationOptions = ObservationOptions(),
        _ fetch: @escaping @Sendable (Connection) throws -> Value
    ) -> DatabaseObservation<Value> {
        DatabaseObservation(database: self, options: options, isDuplicate: { $0 == $1 }, snapshot: snapshot, fetch: fetch)
    }
}
