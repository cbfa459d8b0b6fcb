// Database+FrozenFiles — holding the file and its WAL still while another module reads their raw pages.

extension Database {
    /// Runs `body` while neither the main file nor the `-wal` can change: it holds the writer, so no
    /// transaction commits and no WAL restarts, and the checkpoint gate, so no background or idle
    /// checkpoint copies frames or truncates the WAL. Readers keep reading meanwhile; writers wait.
    ///
    /// `Database.repair(to:)` reads the live file page by page through this: without it, an idle
    /// TRUNCATE checkpoint could empty the WAL between the engine's reads of the main file and of the
    /// WAL, and the rows committed only in the WAL would be lost to the repair.
    /// SPI: for Coffer's own modules only.
    package func withFrozenFiles<T>(_ body: () throws -> T) throws -> T {
        try syncHoldingCheckpoints { _ in try body() }
    }
}
