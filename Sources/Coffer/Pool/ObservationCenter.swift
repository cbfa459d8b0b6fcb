import CSQLCipher
import Foundation

/// One database's change observation: the ``ChangeCollector`` on its writer, the subscribers told of each
/// commit, and the poller that notices other processes' commits.
///
/// Nothing is installed until the first subscriber arrives; when the last one leaves, the next use of
/// the writer removes the hooks again, so a database nobody observes pays nothing per commit.
final class ObservationCenter: @unchecked Sendable {
    typealias Subscriber = @Sendable (DatabaseChangeSet) -> Void

    private let writer: SerializedConnection
    private let lock = NSLock()
    // Guarded by `lock`.
    /// In subscription order, which is the order they are told in.
    private var subscribers: [(id: Int, subscriber: Subscriber)] = []
    private var nextID = 0
    private var closed = false
    private var poller: ExternalCommitPoller?
    /// How often other processes' commits are looked for while something observes.
    let externalLatency: TimeInterval
    // Touched only on the writer's queue.
    private var collector: ChangeCollector?

    init(writer: SerializedConnection, externalLatency: TimeInterval) {
        self.writer = writer
        self.externalLatency = externalLatency
    }

    /// Registers `subscriber`, told (on the writer's queue, so keep it short) of every commit after this
    /// call returns; returns the id to ``unsubscribe(_:)`` with, or nil once the database is closed.
    func subscribe(_ subscriber: @escaping Subscriber) -> Int? {
        let (id, newPoller) = lock.withLock { () -> (Int?, ExternalCommitPoller?) in
            guard !closed else { return (nil, nil) }
            nextID += 1
            subscribers.append((nextID, subscriber))
            guard poller == nil, externalLatency > 0 else { return (nextID, nil) }
            let poller = ExternalCommitPoller(writer: writer, latency: externalLatency) { [weak self] in self?.publish($0) }
            self.poller = poller
            return (nextID, poller)
        }
        guard let id else { return nil }
        // Hooks in place, and the other processes' commit count noted, before the caller's first fetch:
        // no commit after this call goes unreported.
        writer.onQueue { connection in
            self.writer.useObserver = self
            guard let connection else { return }
            self.willUse(connection)
            newPoller?.noteVersion(connection)
        }
        newPoller?.start()
        return id
    }

    /// Stops telling subscriber `id`; the last one out stops the poller (the hooks go at the next write).
    func unsubscribe(_ id: Int) {
        let stopped = lock.withLock { () -> ExternalCommitPoller? in
            subscribers.removeAll { $0.id == id }
            guard subscribers.isEmpty else { return nil }
            defer { poller = nil }
            return poller
        }
        stopped?.stop()
    }

    /// Ends every subscription (the database closes).
    func close() {
        let stopped = lock.withLock { () -> ExternalCommitPoller? in
            closed = true
            subscribers.removeAll()
            defer { poller = nil }
            return poller
        }
        stopped?.stop()
    }

    /// Marks the writer's open transaction as `tag`'s: its change set carries the tag. Call on the
    /// writer's queue, inside the transaction.
    func tagCurrentTransaction(_ tag: ObjectIdentifier) {
        collector?.tags.insert(tag)
    }

    private var isObserved: Bool { lock.withLock { !subscribers.isEmpty } }

    /// Tells every subscriber about `changes` (on the writer's queue), in subscription order: a key-value
    /// store's cache is emptied before observations registered after the store re-fetch.
    private func publish(_ changes: DatabaseChangeSet) {
        let current = lock.withLock { subscribers }
        for entry in current { entry.subscriber(changes) }
    }
}

extension ObservationCenter: WriterUseObserver {
    func willUse(_ connection: Connection) {
        let observed = isObserved
        let generation = writer.generation
        if observed, collector?.installedGeneration != generation {
            let collector = self.collector ?? ChangeCollector { [weak self] in self?.publish($0) }
            collector.install(on: connection, generation: generation)
            self.collector = collector
        } else if !observed, let collector, !connection.isInsideTransaction {
            collector.uninstall(from: connection, generation: generation)
        }
    }

    func didUse(_ connection: Connection) {
        guard let collector else { return }
        collector.writerIsIdle(connection)
        if !connection.isInsideTransaction { connection.commitClock?.writerIsIdle() }
    }
}
