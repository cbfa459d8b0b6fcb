import Foundation

extension Database {
    /// Stops every statement running now on every connection of this database, the writer's and the
    /// readers', like WCDB's `interrupt`: for an app going to the background, or a screen that closes.
    ///
    /// Each interrupted statement throws ``CofferError`` with code ``ResultCode/interrupt`` (match it with
    /// `catch CofferError.interrupt`); a `write` it interrupts rolls back, so nothing it wrote is kept and
    /// nothing committed before is lost. Statements that start after the call run normally, and the
    /// connections stay in the pool, ready for them. Safe from any thread, including while a read or
    /// write of this database runs on it.
    ///
    /// A connection that runs no statement when this is called keeps SQLite's interrupt flag until its
    /// next statement starts, which clears it: the next read or write is not affected.
    ///
    /// ```swift
    /// do {
    ///     try database.read { db in try db.fetchAll(sql: "SELECT * FROM log") }
    /// } catch CofferError.interrupt {
    ///     // stopped by database.interrupt() from another thread
    /// }
    /// ```
    public func interrupt() {
        factory.interrupts.interruptAll()
    }

    /// Registers `observer`, kept weakly, to be told of each transaction of the writer as it ends and to
    /// refuse commits (see ``TransactionObserver``). Observers are told in the order they were added; one
    /// added inside a write hears that write's end. Callable from inside a write.
    ///
    /// - Throws: ``CofferError/apiMisuse`` when the database is closed.
    public func add(transactionObserver observer: any TransactionObserver) throws {
        try onWriterQueue { factory.transactionObservers.add(observer) }
    }

    /// Stops telling `observer`. Callable from inside a write.
    public func remove(transactionObserver observer: any TransactionObserver) throws {
        try onWriterQueue { factory.transactionObservers.remove(observer) }
    }

    /// Runs `body` on the writer's queue, at once when already on it; throws when the database is closed.
    private func onWriterQueue(_ body: () -> Void) throws {
        var open = false
        writer.onQueue { connection in
            open = connection != nil
            if open { body() }
        }
        if !open { throw SerializedConnection.closedError }
    }
}
