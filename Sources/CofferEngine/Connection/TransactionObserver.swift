/// Told of each transaction of the writer as it ends, and able to refuse its commit.
///
/// Register one with ``Database/add(transactionObserver:)``. Every method is called on the writer's
/// queue, inside the write that ran the transaction, so keep them short:
///
/// - ``willCommit(_:)`` runs after the write's closure returned and before `COMMIT`, with the
///   transaction still open: it may read (or write) through the connection it is given. Throwing refuses
///   the commit: the transaction rolls back, ``didRollback(_:)`` follows, and the `write` throws that error.
/// - ``didCommit(_:)`` runs once `COMMIT` succeeded; ``didRollback(_:)`` once a transaction rolled back
///   for any reason (the closure threw, a statement was interrupted, an observer refused).
///
/// Savepoints (``Connection/savepoint(_:)``) are part of the transaction around them: an observer hears
/// only the outermost transaction's end, and a savepoint rolled back alone is not a rollback. Transactions
/// the caller opens with SQL inside ``Database/writeWithoutTransaction(_:)`` are not observed.
public protocol TransactionObserver: AnyObject {
    /// The transaction is about to commit; throw to roll it back instead.
    func willCommit(_ connection: Connection) throws
    /// The transaction committed.
    func didCommit(_ connection: Connection)
    /// The transaction rolled back.
    func didRollback(_ connection: Connection)
}

extension TransactionObserver {
    /// Does nothing.
    public func didCommit(_ connection: Connection) {}
    /// Does nothing.
    public func didRollback(_ connection: Connection) {}
}

/// The transaction observers of one database, kept on its writer connections; touched only on the
/// writer's queue (by ``Connection/inTransaction(_:_:)`` and by adding and removing observers).
package final class TransactionObservers: @unchecked Sendable {
    /// Kept weakly, like GRDB's observers: an observer goes away when its owner releases it.
    private struct Entry {
        weak var observer: (any TransactionObserver)?
    }

    @exclusivity(unchecked) private var entries: [Entry] = []

    package init() {}

    /// True when at least one observer was added and not removed.
    var isEmpty: Bool { entries.isEmpty }

    package func add(_ observer: any TransactionObserver) {
        entries.removeAll { $0.observer == nil }
        entries.append(Entry(observer: observer))
    }

    package func remove(_ observer: any TransactionObserver) {
        entries.removeAll { $0.observer == nil || $0.observer === observer }
    }

    func willCommit(_ connection: Connection) throws {
        for entry in entries { try entry.observer?.willCommit(connection) }
    }

    func didCommit(_ connection: Connection) {
        for entry in entries { entry.observer?.didCommit(connection) }
    }

    func didRollback(_ connection: Connection) {
        for entry in entries { entry.observer?.didRollback(connection) }
    }
}
