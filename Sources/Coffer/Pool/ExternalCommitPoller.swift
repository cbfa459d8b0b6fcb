import Foundation

/// Notices commits made by other connections to the file — another process, or another ``Database`` on
/// the same path — by reading `PRAGMA data_version` on the writer every `latency` seconds.
///
/// The pragma's value changes when a connection other than the one asking commits. The writer is the
/// connection asking because it is the one that never sees a commit of its own there: on a reader the
/// writer's commits would count too. A TRUNCATE checkpoint run by the checkpointer's connection also moves
/// it (the WAL restarts), which costs one spurious re-fetch per observation after an idle checkpoint.
final class ExternalCommitPoller: @unchecked Sendable {
    private let writer: SerializedConnection
    private let latency: TimeInterval
    private let publish: @Sendable (DatabaseChangeSet) -> Void
    private let timer: DispatchSourceTimer
    // Touched only on the writer's queue.
    private var lastVersion: (generation: Int, version: Int)?

    init(writer: SerializedConnection, latency: TimeInterval, publish: @escaping @Sendable (DatabaseChangeSet) -> Void) {
        self.writer = writer
        self.latency = latency
        self.publish = publish
        self.timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
    }

    func start() {
        timer.schedule(deadline: .now(), repeating: latency, leeway: .milliseconds(Int(latency * 100)))
        timer.setEventHandler { [weak self] in self?.poll() }
        timer.resume()
    }

    func stop() { timer.cancel() }

    /// Reads the current count (on the writer's queue) without publishing.
    func noteVersion(_ connection: Connection) {
        if let version = try? connection.fetchValue(Int.self, sql: "PRAGMA data_version") {
            lastVersion = (writer.generation, version)
        }
    }

    private func poll() {
        writer.async { connection in
            guard let connection, !connection.isInsideTransaction,
                let version = try? connection.fetchValue(Int.self, sql: "PRAGMA data_version")
            else { return }
            let generation = self.writer.generation
            defer { self.lastVersion = (generation, version) }
            // A new writer (after a rekey) starts its own count.
            guard let last = self.lastVersion, last.generation == generation, last.version != version else { return }
            self.publish(DatabaseChangeSet(sequence: 0, rows: [], isWholeDatabase: true, isExternal: true))
        }
    }
}
