// Connection+Trace — SQLite keeps one trace callback per connection (`sqlite3_trace_v2`); change
// collection, read regions, statement counting and monitoring all listen, so the connection owns that one
// callback and fans each event out to whoever asked for its kind. With no listener, no callback is installed
// and SQLite traces nothing.

import CSQLCipher

/// One event of SQLite's statement trace, as `sqlite3_trace_v2` reports it.
package struct TraceEvent {
    /// `SQLITE_TRACE_STMT`, `SQLITE_TRACE_PROFILE` or `SQLITE_TRACE_ROW`.
    let kind: UInt32
    /// The statement the event is about.
    package let statement: OpaquePointer
    /// SQLite's detail pointer: the SQL text for STMT (a trigger's start is a `--` comment), a pointer to
    /// the elapsed nanoseconds (`Int64`) for PROFILE, nil for ROW.
    let detail: UnsafeMutableRawPointer?

    /// For a STMT event: whether it reports a trigger starting (its text is a comment) rather than a
    /// top-level statement.
    var isTriggerStart: Bool {
        detail.map { $0.assumingMemoryBound(to: CChar.self).pointee == 0x2D } ?? false
    }

    /// For a PROFILE event: the statement's elapsed wall-clock time in nanoseconds.
    var elapsedNanoseconds: Int64 {
        detail.map { $0.assumingMemoryBound(to: Int64.self).pointee } ?? 0
    }
}

/// The listeners of one connection's trace; only touched on the thread that uses the connection.
final class TraceListeners {
    fileprivate struct Listener {
        let id: Int
        let mask: UInt32
        let body: (TraceEvent) -> Void
    }

    fileprivate var listeners: [Listener] = []
    fileprivate var nextID = 0
    fileprivate var installedMask: UInt32 = 0

    /// Whether SQLite's trace callback is installed (some listener is listening).
    var isTracing: Bool { installedMask != 0 }

    fileprivate func dispatch(_ event: TraceEvent) {
        for listener in listeners where listener.mask & event.kind != 0 { listener.body(event) }
    }
}

extension Connection {
    /// Calls `body` for every trace event of the kinds in `mask` (`SQLITE_TRACE_STMT`, `_PROFILE`, `_ROW`)
    /// until ``removeTraceListener(_:)`` is called with the returned identifier.
    package func addTraceListener(mask: Int32, _ body: @escaping (TraceEvent) -> Void) -> Int {
        let id = traceListeners.nextID
        traceListeners.nextID += 1
        traceListeners.listeners.append(.init(id: id, mask: UInt32(mask), body: body))
        installTrace()
        return id
    }

    /// Stops the listener `id`; the trace callback goes when its last listener does.
    package func removeTraceListener(_ id: Int) {
        traceListeners.listeners.removeAll { $0.id == id }
        installTrace()
    }

    private func installTrace() {
        let mask = traceListeners.listeners.reduce(UInt32(0)) { $0 | $1.mask }
        guard mask != traceListeners.installedMask, !isClosed else { return }
        traceListeners.installedMask = mask
        guard mask != 0 else {
            sqlite3_trace_v2(handle, 0, nil, nil)
            return
        }
        sqlite3_trace_v2(
            handle, mask,
            { kind, context, statement, detail in
                guard let context, let statement else { return 0 }
                Unmanaged<TraceListeners>.fromOpaque(context).takeUnretainedValue()
                    .dispatch(TraceEvent(kind: kind, statement: OpaquePointer(statement), detail: detail))
                return 0
            }, Unmanaged.passUnretained(traceListeners).toOpaque())
    }
}
