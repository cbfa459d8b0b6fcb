/// Notices commits made by other connections to the file — another process, or another ``Database`` on
/// the same path — by reading `PRAGMA data_version` on the writer; ``ObservationCenter`` decides when
/// (every `externalLatency` while values are observed, on request for a key-value cache).
///
/// The pragma's value changes when a connection other than the one asking commits. The writer is the
/// connection asking because it is the one that never sees a commit of its own there: on a reader the
/// writer's commits would count too. A TRUNCATE checkpoint run by the checkpointer's connection also moves
/// it (the WAL restarts), which costs one spurious re-fetch per observation after an idle checkpoint.
final class ExternalCommitPoller {
    private let writer: SerializedConnection
    // Touched only on the writer's queue.
    private var lastVersion: (generation: Int, version: Int)?

    init(writer: SerializedConnection) { self.writer = writer }

    /// Reads the current count (on the writer's queue) without comparing: commits before now are known.
    func noteVersion(_ connection: Connection) {
        if let version = try? connection.fetchValue(Int.self, sql: "PRAGMA data_version") {
            lastVersion = (writer.generation, version)
        }
    }

    /// True when another connection committed since the last look (on the writer's queue, outside a
    /// transaction: inside one the count is the transaction's snapshot's).
    func otherConnectionsCommitted(_ connection: Connection) -> Bool {
        guard !connection.isInsideTransaction, let version = try? connection.fetchValue(Int.self, sql: "PRAGMA data_version")
        else { return false }
        let generation = writer.generation
        defer { lastVersion = (generation, version) }
        // A new writer (after a rekey) starts its own count: its first look only notes it.
        guard let last = lastVersion, last.generation == generation else { return false }
        return last.version != version
    }
}
