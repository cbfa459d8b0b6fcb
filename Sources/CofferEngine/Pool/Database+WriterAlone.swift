import Foundation

// The one way to change what the writer's connection stands on — the file under it (vacuum) or its key
// (rekey): nothing else may read or checkpoint meanwhile, and the writer comes back on a fresh connection.

extension Database {
    /// Runs `body` with the writer alone on the file: the readers drained and held back, the automatic
    /// checkpointer suspended, the backup page tracker's listener invalidated (every page may change), and —
    /// holding the checkpoint gate, on the writer's queue — `checkpointSQL` (a `wal_checkpoint(TRUNCATE)`,
    /// so nothing committed stays in a WAL) run first. `body` gets the writer's connection and a
    /// ``WriterSwap`` to close it and to open its replacement; readers reopen lazily afterwards.
    package func withWriterAlone<T>(
        checkpointSQL: String = "PRAGMA wal_checkpoint(TRUNCATE)", _ body: (Connection, WriterSwap) throws -> T
    ) throws -> T {
        readers?.suspendAndDrain()
        checkpointer?.suspend()
        commitHook.invalidateListener()
        defer {
            checkpointer?.resume()
            readers?.resume()
        }
        let swap = WriterSwap(factory: factory, checkpointer: checkpointer, writer: writer)
        return try syncHoldingCheckpoints { connection in
            try connection.executeScript(checkpointSQL)
            return try body(connection, swap)
        }
    }
}

/// Closes the writer's connection and opens its replacement, inside ``Database/withWriterAlone(checkpointSQL:_:)``.
package struct WriterSwap {
    let factory: ConnectionFactory
    let checkpointer: Checkpointer?
    let writer: SerializedConnection

    /// Takes `connection` (the writer's) out of service: no checkpoint runs on it, the writer holds none.
    package func detach(_ connection: Connection) {
        checkpointer?.uninstall(from: connection)
        writer.replaceConnection(nil)
    }

    /// Opens a fresh writer with the factory's current key and puts it in service.
    package func reopen() throws {
        let reopened = try factory.open(.writer)
        checkpointer?.install(on: reopened)
        writer.replaceConnection(reopened)
    }
}
