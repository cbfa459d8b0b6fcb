internal import Atomics
import CSQLCipher
import Foundation

/// What a subscriber of ``ObservationCenter`` needs from each commit: the cheapest collection that
/// serves every current subscriber is the one installed on the writer.
package enum ObservationDemand: Comparable, Sendable {
    /// The names of the tables each commit changed (a cache that empties itself): the update hook
    /// notes table names only, no statement is traced, and other processes are looked for only on request
    /// (``ObservationCenter/checkExternalChanges(then:)``).
    case tables
    /// Every row, with the columns updates set (value observations, ``Database/changes(in:)``); other
    /// processes are polled every ``ObservationCenter/externalLatency``.
    case rows
}

/// One database's change observation: the ``ChangeCollector`` on its writer, the subscribers told of each
/// commit, and the poller that notices other processes' commits.
///
/// Nothing is installed until the first subscriber arrives; when the last one leaves, the next use of
/// the writer removes the hooks again, so a database nobody observes pays nothing per commit. A key-value
/// cache alone (``ObservationDemand/tables``) costs a table-name check per changed row and no timer.
package final class ObservationCenter: @unchecked Sendable {
    package typealias Subscriber = @Sendable (DatabaseChangeSet) -> Void

    private let writer: SerializedConnection
    private let lock = NSLock()
    // Guarded by `lock`.
    /// Indexed by the tables each wants; told in subscription order.
    private var subscribers = ObservationSubscribers()
    private var nextID = 0
    /// How many subscribers need rows, and how many table names only.
    private var rowSubscribers = 0
    private var tableSubscribers = 0
    private var closed = false
    /// Polls while a ``ObservationDemand/rows`` subscriber exists.
    private var pollingTimer: DispatchSourceTimer?
    /// Callers waiting for the requested look at other processes' commits.
    private var checkWaiters: [@Sendable () -> Void] = []
    /// How often other processes' commits are looked for while something observes.
    package let externalLatency: TimeInterval
    /// Moves (under `lock`) whenever the tables subscribers follow change: the collector reads it at every
    /// row and re-reads ``followedTables()`` when it moved.
    private let followedVersion = ManagedAtomic<Int>(0)
    // Touched only on the writer's queue.
    private var collector: ChangeCollector?
    private let poller: ExternalCommitPoller

    init(writer: SerializedConnection, externalLatency: TimeInterval) {
        self.writer = writer
        self.externalLatency = externalLatency
        self.poller = ExternalCommitPoller(writer: writer)
    }

    /// Registers `subscriber`, told (on the writer's queue, so keep it short) of every commit after this
    /// call returns that may have changed one of `tables` (lower-cased; nil: every commit; see
    /// ``setTables(_:for:)``), and `onClose` when the database closes; returns the id to
    /// ``unsubscribe(_:)`` with, or nil once the database is closed.
    package func subscribe(
        _ demand: ObservationDemand = .rows, tables: Set<String>? = nil, onClose: (@Sendable () -> Void)? = nil,
        _ subscriber: @escaping Subscriber
    ) -> Int? {
        let (id, isFirst, startsPolling) = lock.withLock { () -> (Int?, Bool, Bool) in
            guard !closed else { return (nil, false, false) }
            nextID += 1
            subscribers.insert(nextID, .init(demand: demand, subscriber: subscriber, onClose: onClose, tables: tables))
            followedVersion.wrappingIncrement(ordering: .sequentiallyConsistent)
            if demand == .rows { rowSubscribers += 1 } else { tableSubscribers += 1 }
            return (nextID, subscribers.count == 1, demand == .rows && pollingTimer == nil && externalLatency > 0)
        }
        guard let id else { return nil }
        // Hooks in place, and the other processes' commit count noted, before the caller's first fetch:
        // no commit after this call goes unreported.
        writer.onQueue { connection in
            self.writer.useObserver = self
            guard let connection else { return }
            self.willUse(connection)
            // Other processes' commits before the first subscriber concern nobody.
            if isFirst && self.externalLatency > 0 { self.poller.noteVersion(connection) }
        }
        if startsPolling { startPolling() }
        return id
    }

    /// From now on, tells subscriber `id` only of the commits that may have changed one of `tables`
    /// (lower-cased; nil: every commit). Commits that may have changed anything (schema changes, other
    /// processes) reach every subscriber. A commit being published while this runs may be told with the
    /// old tables or the new ones: widen before reading, narrow once what was read is known.
    package func setTables(_ tables: Set<String>?, for id: Int) {
        lock.withLock {
            subscribers.setTables(tables, for: id)
            followedVersion.wrappingIncrement(ordering: .sequentiallyConsistent)
        }
    }

    /// Stops telling subscriber `id`; the poller stops once no ``ObservationDemand/rows`` subscriber is
    /// left (the hooks go, or become lighter, at the writer's next use).
    package func unsubscribe(_ id: Int) {
        let stopped = lock.withLock { () -> DispatchSourceTimer? in
            if let removed = subscribers.remove(id) {
                if removed.demand == .rows { rowSubscribers -= 1 } else { tableSubscribers -= 1 }
                followedVersion.wrappingIncrement(ordering: .sequentiallyConsistent)
            }
            guard rowSubscribers == 0 else { return nil }
            defer { pollingTimer = nil }
            return pollingTimer
        }
        stopped?.cancel()
    }

    /// Ends every subscription (the database closes), telling those that asked.
    func close() {
        let (stopped, waiters, closing) = lock.withLock {
            () -> (DispatchSourceTimer?, [@Sendable () -> Void], [@Sendable () -> Void]) in
            closed = true
            defer {
                subscribers = ObservationSubscribers()
                rowSubscribers = 0
                tableSubscribers = 0
                pollingTimer = nil
                checkWaiters = []
            }
            return (pollingTimer, checkWaiters, subscribers.all.compactMap(\.onClose))
        }
        stopped?.cancel()
        waiters.forEach { $0() }
        closing.forEach { $0() }
    }

    /// Marks the writer's open transaction as `tag`'s: its change set carries the tag. Call on the
    /// writer's queue, inside the transaction.
    package func tagCurrentTransaction(_ tag: ObjectIdentifier) {
        collector?.tags.insert(tag)
    }

    /// Looks for other processes' commits now, without waiting: publishes an external change set if there
    /// were any, then calls `done` (on the writer's queue). Requests made while one is pending share it.
    /// Does nothing but call `done` when other processes are not looked for (`externalLatency` 0).
    package func checkExternalChanges(then done: @escaping @Sendable () -> Void) {
        guard externalLatency > 0 else { return done() }
        let first = lock.withLock { () -> Bool in
            checkWaiters.append(done)
            return checkWaiters.count == 1
        }
        guard first else { return }
        writer.async { connection in
            if let connection { self.pollExternalChanges(connection) }
            let waiters = self.lock.withLock { () -> [@Sendable () -> Void] in
                defer { self.checkWaiters = [] }
                return self.checkWaiters
            }
            waiters.forEach { $0() }
        }
    }

    private func startPolling() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        timer.schedule(
            deadline: .now() + externalLatency, repeating: externalLatency, leeway: .milliseconds(Int(externalLatency * 100)))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.writer.async { connection in
                if let connection { self.pollExternalChanges(connection) }
            }
        }
        let started = lock.withLock { () -> Bool in
            guard pollingTimer == nil, !closed else { return false }
            pollingTimer = timer
            return true
        }
        if started { timer.resume() }
    }

    /// On the writer's queue: publishes an external change set when another connection committed.
    private func pollExternalChanges(_ connection: Connection) {
        guard poller.otherConnectionsCommitted(connection) else { return }
        publish(DatabaseChangeSet(sequence: 0, rows: [], isWholeDatabase: true, isExternal: true))
    }

    /// The lower-cased tables some subscriber follows (nil: every table), with ``followedVersion`` as it
    /// was when they were read.
    private func followedTables() -> (version: Int, tables: Set<String>?) {
        lock.withLock { (followedVersion.load(ordering: .sequentiallyConsistent), subscribers.followedTables) }
    }

    /// The collection current subscribers need, nil when there are none.
    private var demand: ObservationDemand? {
        lock.withLock { rowSubscribers > 0 ? .rows : tableSubscribers > 0 ? .tables : nil }
    }

    /// Tells the subscribers `changes` may concern (on the writer's queue), in subscription order: a
    /// key-value store's cache is emptied before observations registered after the store re-fetch. Those
    /// that follow only other tables are not visited: a commit's cost does not grow with them.
    private func publish(_ changes: DatabaseChangeSet) {
        let concerned = lock.withLock { subscribers.subscribers(for: changes) }
        for subscriber in concerned { subscriber(changes) }
    }
}

extension ObservationCenter: WriterUseObserver {
    func willUse(_ connection: Connection) {
        let demand = self.demand
        let generation = writer.generation
        if let demand {
            let collector =
                self.collector
                ?? ChangeCollector(
                    publish: { [weak self] in self?.publish($0) },
                    followedVersion: { [followedVersion] in followedVersion.load(ordering: .sequentiallyConsistent) },
                    followedTables: { [weak self] in self?.followedTables() ?? (0, nil) })
            if collector.installedGeneration != generation || collector.mode != demand {
                collector.install(demand, on: connection, generation: generation)
            }
            self.collector = collector
        } else if let collector, !connection.isInsideTransaction {
            collector.uninstall(from: connection, generation: generation)
            self.collector = nil
            // Nothing to be told before or after each use until the next subscriber.
            writer.useObserver = nil
        }
    }

    func didUse(_ connection: Connection) {
        guard let collector else { return }
        collector.writerIsIdle(connection)
        if !connection.isInsideTransaction { connection.commitClock?.writerIsIdle() }
    }
}
