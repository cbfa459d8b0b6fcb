import Tracing

/// The spans of one database (``Monitoring/spans``): each transaction and each long operation runs in a
/// span of the app's tracer, with the attributes `db.system` (`sqlite`) and `db.name`.
package struct DatabaseSpans: Sendable {
    let tracer: any Tracer
    let databaseName: String

    /// The spans `monitoring` asks for on the database at `path`, or nil when spans are off.
    static func make(for monitoring: Monitoring, path: String) -> DatabaseSpans? {
        guard monitoring.spans else { return nil }
        return DatabaseSpans(
            tracer: monitoring.tracer ?? InstrumentationSystem.tracer, databaseName: monitoring.label(forPath: path))
    }

    /// Runs `body` in a span named `name` (`coffer.write`, `coffer.backup`, …); a thrown error is recorded
    /// on the span.
    func run<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        try Self.run(on: tracer, name, databaseName: databaseName, body)
    }

    private static func run<Traced: Tracer, T>(
        on tracer: Traced, _ name: String, databaseName: String, _ body: () throws -> T
    ) rethrows -> T {
        try tracer.withSpan(name, ofKind: .internal) { span in
            span.attributes["db.system"] = "sqlite"
            span.attributes["db.name"] = databaseName
            return try body()
        }
    }
}

extension Optional where Wrapped == DatabaseSpans {
    /// Runs `body` in a span when spans are on, else just runs it.
    package func run<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        guard let spans = self else { return try body() }
        return try spans.run(name, body)
    }
}
