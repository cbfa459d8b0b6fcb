// Database+Monitoring — the spans and metrics of work that lives in other modules (repair), reached
// through Coffer's SPI.

extension Database {
    /// Runs `body` in a span named `name` when ``Monitoring/spans`` is on, else just runs it.
    /// SPI: for Coffer's own modules only.
    package func monitored<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        try spans.run(name, body)
    }

    /// Counts a repair's pages read and rows recovered when ``Monitoring/metrics`` is on.
    /// SPI: for Coffer's own modules only.
    package func recordRepair(pages: Int, rows: Int) {
        guard let metrics = factory.metrics else { return }
        metrics.repairPages.increment(by: pages)
        metrics.repairRows.increment(by: rows)
    }
}
