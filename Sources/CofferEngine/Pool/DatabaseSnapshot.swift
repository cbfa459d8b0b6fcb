import Dispatch
import Foundation

/// A read-only view of one committed state of a database that stays fixed, across any number of reads
/// and `await`s, while the writer commits — like GRDB's `DatabaseSnapshot`. Made by
/// ``Database/makeSnapshot()``.
///
/// A snapshot holds one reader connection inside an open read transaction until ``close()`` (or until it
/// is released, or its database closes, rekeys or vacuums: then its reads throw
/// ``CofferError/apiMisuse``). What that costs:
/// - the reader is taken from the pool: with ``Configuration/readerCount`` snapshots open, every other
///   read waits for one to close;
/// - no checkpoint can copy the WAL past the state the snapshot reads, so the `-wal` file grows with
///   every commit until the snapshot closes (the checkpoints that follow then catch up).
///
/// Reads run one at a time on the snapshot's own queue.
public final class DatabaseSnapshot: @unchecked Sendable {
    private let queue = DispatchQueue(label: "coffer.snapshot", qos: .userInitiated)
    private let key = DispatchSpecificKey<Void>()
    private let pool: ReaderPool
    private let setup: ConnectionSetup
    /// The state the snapshot reads, for ``concurrentRead(_:)``: set by `init` where the library has
    /// `sqlite3_snapshot_get`, released with the reader.
    private var walSnapshot: WALSnapshot?
    // Touched only on `queue`.
    private var connection: Connection?
    private var revocation = 0
    /// Set when the pool asked the reader back (close, rekey, vacuum), possibly before `init` finished.
    private var revoked = false

    init(pool: ReaderPool, setup: ConnectionSetup) throws {
        self.pool = pool
        self.setup = setup
        queue.setSpecific(key: key, value: ())
        // The revocation is registered as the reader is handed out (no drain can begin between the two), and
        // runs on the snapshot's queue like `init`'s own work below: a drain that starts before the
        // transaction begins finds the reader given back by `init` itself.
        let (connection, revocation) = try pool.checkOutHeld { [weak self] in self?.revoke() }
        try queue.sync {
            self.revocation = revocation
            guard !revoked else {
                pool.checkIn(connection)
                throw CofferError(code: .busy, message: "the database was closing or changing its key; try again")
            }
            do {
                try setup.prepare(connection)
                try connection.execute(sql: Connection.TransactionKind.deferred.beginSQL)
                connection.stampReadTransaction()
                // A read transaction starts at its first read: this one fixes the state every read sees.
                _ = try connection.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master")
                walSnapshot = WALSnapshot(of: connection)
            } catch {
                connection.rollbackIfNeeded()
                pool.removeRevocation(revocation)
                pool.checkIn(connection)
                throw error
            }
            self.connection = connection
        }
    }

    /// True when the snapshot holds a reader of `pool` (a snapshot of the database owning it).
    package func isOf(_ pool: ReaderPool?) -> Bool { pool === self.pool }

    /// The pool drains: give the reader back now, and refuse it if `init` has not taken it yet.
    private func revoke() {
        let body = {
            self.revoked = true
            self.releaseOnQueue()
        }
        if DispatchQueue.getSpecific(key: key) != nil { body() } else { queue.sync(execute: body) }
    }

    deinit { close() }

    /// Runs `body` on the snapshot's connection: every read sees the state the snapshot was made in.
    ///
    /// - Throws: ``CofferError/apiMisuse`` once the snapshot is closed, or when `body` ended its
    ///   transaction.
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        guard DispatchQueue.getSpecific(key: key) == nil else {
            throw CofferError(code: .apiMisuse, message: "reentrant snapshot read: use the connection you already have")
        }
        return try queue.sync { try readOnQueue(body) }
    }

    /// Async ``read(_:)``: runs on the snapshot's queue, never blocking the caller's thread. Cancelling
    /// the task interrupts the statement running for it and throws `CancellationError`; the snapshot
    /// stays open and fixed.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await CancellationLatch.call { latch, complete in
            self.queue.async {
                complete(Result { try self.readOnQueue { connection in try latch.run(on: connection) { try body(connection) } } })
            }
        }
    }

    private func readOnQueue<T>(_ body: (Connection) throws -> T) throws -> T {
        guard let connection else { throw Self.closedError }
        defer {
            // The snapshot is its transaction: a body that ended it ends the snapshot.
            if !connection.isInsideTransaction { releaseOnQueue() }
        }
        let result = try body(connection)
        guard connection.isInsideTransaction else {
            throw CofferError(code: .apiMisuse, message: "a snapshot read ended the snapshot's transaction")
        }
        return result
    }

    /// Runs `body` on another reader of the pool, in a read transaction opened on the snapshot's state
    /// (SQLite's `sqlite3_snapshot_open`): unlike ``read(_:)``, which runs one at a time on the snapshot's
    /// own connection, several of these run at once, each on a reader of its own — GRDB's
    /// `DatabaseSnapshotPool`. Every one sees exactly the state ``read(_:)`` sees.
    ///
    /// Needs ``SQLiteFeature/snapshots`` (SQLCipher 4's builds) and a pool of two readers or more (the
    /// snapshot holds one). Each call takes a reader like ``Database/read(_:)``, and waits for one when all
    /// are busy.
    ///
    /// - Throws: ``ResultCode/unsupportedByLibrary`` on SQLCipher 3.4.1; ``CofferError/apiMisuse`` once
    ///   the snapshot is closed, or with a single reader.
    public func concurrentRead<T>(_ body: (Connection) throws -> T) throws -> T {
        try LinkedSQLite.require(.snapshots, for: "DatabaseSnapshot.concurrentRead")
        guard pool.capacity > 1 else {
            throw CofferError(code: .apiMisuse, message: "concurrentRead needs readerCount of 2 or more")
        }
        guard let walSnapshot else { throw Self.closedError }
        return try pool.withReader { connection in
            try setup.prepare(connection)
            // sqlite3_snapshot_open needs a connection that has seen the file is in WAL mode: one read first.
            _ = try connection.fetchValue(Int.self, sql: "PRAGMA schema_version")
            return try connection.inTransaction(.deferred) {
                try walSnapshot.open(in: connection)
                connection.stampReadTransaction()
                return try body(connection)
            }
        }
    }

    /// Async ``concurrentRead(_:)``, never blocking the caller's thread. Cancelling the task interrupts the
    /// statement running for it and throws `CancellationError`.
    public func concurrentRead<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await CancellationLatch.call { latch, complete in
            DispatchQueue.global(qos: .userInitiated).async {
                complete(
                    Result { try self.concurrentRead { connection in try latch.run(on: connection) { try body(connection) } } })
            }
        }
    }

    /// Ends the read transaction and gives the reader back to the pool. Later reads throw
    /// ``CofferError/apiMisuse``. Closing twice is harmless; so is closing from inside a read.
    public func close() {
        if DispatchQueue.getSpecific(key: key) != nil {
            releaseOnQueue()
        } else {
            queue.sync { releaseOnQueue() }
        }
    }

    /// True until ``close()``.
    public var isOpen: Bool {
        if DispatchQueue.getSpecific(key: key) != nil { return connection != nil }
        return queue.sync { connection != nil }
    }

    private func releaseOnQueue() {
        guard let connection else { return }
        self.connection = nil
        walSnapshot?.release()
        connection.rollbackIfNeeded()
        pool.removeRevocation(revocation)
        pool.checkIn(connection)
    }

    static let closedError = CofferError(code: .apiMisuse, message: "the snapshot is closed")
}

extension Database {
    /// A snapshot of the database's last committed state, fixed until you close it: several queries,
    /// across `await`s, read one state while the writer goes on committing.
    ///
    /// It holds a reader of the pool in an open read transaction, and the WAL cannot be checkpointed past
    /// it (see ``DatabaseSnapshot``): close it as soon as the report is done.
    ///
    /// ```swift
    /// let snapshot = try database.makeSnapshot()
    /// defer { snapshot.close() }
    /// let notes = try await snapshot.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
    /// let words = try await snapshot.read { db in try db.fetchValue(Int.self, sql: "SELECT sum(length(text)) FROM note") }
    /// ```
    ///
    /// - Throws: ``CofferError/apiMisuse`` for an in-memory database or one opened without readers (its
    ///   reads run on the writer), or when the database is closed; ``CofferError/busy`` when the database
    ///   began closing, rekeying or vacuuming while the snapshot was made (try again).
    public func makeSnapshot() throws -> DatabaseSnapshot {
        guard let readers else {
            throw CofferError(code: .apiMisuse, message: "snapshots need reader connections (not in memory, readerCount > 0)")
        }
        return try DatabaseSnapshot(pool: readers, setup: connectionSetup)
    }
}
