import CSQLCipher
import Dispatch
import Foundation
import Logging

extension Connection {
    /// How long a statement waits for a lock another connection holds before `SQLITE_BUSY`; every change of
    /// the timeout goes through here, so the lock-wait trace (``Monitoring/lockWaits``), when on, keeps
    /// timing the waits.
    ///
    /// Without a trace this is `sqlite3_busy_timeout` itself. With one, Coffer's own busy handler waits the
    /// same way (SQLite's back-off: 1, 2, 5, 10 … 100 ms between tries, never past the timeout) and, the
    /// first time one wait passes the trace's threshold, logs it with the processes that hold the database's
    /// locks (``LockHolders``).
    package func setBusyTimeout(milliseconds: Int32) {
        guard let waiter = busyWaiter as? BusyWaiter else {
            sqlite3_busy_timeout(handle, milliseconds)
            return
        }
        waiter.timeoutMilliseconds = milliseconds
        sqlite3_busy_handler(
            handle,
            { context, count in
                guard let context else { return 0 }
                return Unmanaged<BusyWaiter>.fromOpaque(context).takeUnretainedValue().wait(count: count)
            }, Unmanaged.passUnretained(waiter).toOpaque())
    }

    /// Turns the lock-wait trace on (`trace`) or off (nil) for the next ``setBusyTimeout(milliseconds:)``.
    package func traceLockWaits(_ trace: LockWaitTrace?) {
        busyWaiter = trace.map { BusyWaiter(trace: $0, path: path) }
    }
}

/// The lock-wait trace of one database (``Monitoring/lockWaits``): the threshold and where it logs.
package struct LockWaitTrace: Sendable {
    let thresholdNanoseconds: UInt64
    let logger: Logger

    /// The trace `monitoring` asks for, or nil when it is off.
    package static func make(for monitoring: Monitoring, logger: Logger) -> LockWaitTrace? {
        guard case .slow(let seconds) = monitoring.lockWaits else { return nil }
        return LockWaitTrace(thresholdNanoseconds: UInt64(max(0, seconds) * 1e9), logger: logger)
    }
}

/// One connection's busy handler while the lock-wait trace is on. Called by SQLite on the connection's
/// thread only (one at a time), so its state needs no lock.
final class BusyWaiter: @unchecked Sendable {
    var timeoutMilliseconds: Int32 = 0
    private let trace: LockWaitTrace
    private let path: String
    private var waitStarted: UInt64 = 0
    private var logged = false
    /// SQLite's own back-off (sqliteDefaultBusyCallback): the pause before each try, in milliseconds.
    private static let delays: [Int32] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]

    init(trace: LockWaitTrace, path: String) {
        self.trace = trace
        self.path = path
    }

    /// SQLite's busy callback: `count` is the number of earlier calls for this wait. Returns 1 to try again
    /// after a pause, 0 to give up (the statement fails with `SQLITE_BUSY`).
    func wait(count: Int32) -> Int32 {
        let now = DispatchTime.now().uptimeNanoseconds
        if count == 0 {
            waitStarted = now
            logged = false
        }
        let waited = now - min(now, waitStarted)
        if !logged, waited >= trace.thresholdNanoseconds {
            logged = true
            log("waiting for a database lock", waited: waited)
        }
        let index = Int(count)
        var delay = index < Self.delays.count ? Self.delays[index] : 100
        let prior: Int32 =
            index < Self.delays.count
            ? Self.delays[..<index].reduce(0, +) : Self.delays.reduce(0, +) + 100 * Int32(clamping: index - Self.delays.count)
        if prior + delay > timeoutMilliseconds {
            delay = timeoutMilliseconds - prior
            guard delay > 0 else {
                if waited >= trace.thresholdNanoseconds { log("gave up waiting for a database lock", waited: waited) }
                return 0
            }
        }
        usleep(useconds_t(delay) * 1000)
        return 1
    }

    private func log(_ message: Logger.Message, waited: UInt64) {
        let holders = LockHolders.foreign(databasePath: path)
        trace.logger.notice(
            message,
            metadata: [
                "path": "\(path)",
                "waited_ms": "\(String(format: "%.1f", Double(waited) / 1e6))",
                "holders": .string(
                    !LockHolders.isAvailable
                        ? "unknown on this platform"
                        : holders.isEmpty
                            ? "no other process (another connection of this process)"
                            : holders.map(\.description).joined(separator: ", ")),
            ])
    }
}
