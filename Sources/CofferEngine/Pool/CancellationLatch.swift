import CSQLCipher
import Foundation

/// Carries one async call's cancellation to the connection running it, and to no other.
///
/// The call's `withTaskCancellationHandler` calls ``cancel()`` from whatever thread cancels the task.
/// The connection is attached only while the call's closure runs on it (``run(on:_:)``, on the
/// connection's thread); attaching, detaching and interrupting share one lock, so a cancel that arrives
/// after the closure finished never interrupts the next use of that connection, whoever makes it.
///
/// A cancel landing between two statements of the closure sets SQLite's interrupt flag while no
/// statement runs; SQLite clears that flag when the next statement starts. So ``run(on:_:)`` also looks at
/// the latch when the closure ends: a cancelled call always throws `CancellationError`, and a transaction
/// around it rolls back (which also clears the flag before the connection is used again).
package final class CancellationLatch: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var cancelled = false
    private var attached: OpaquePointer?

    package init() {}

    /// Marks the call cancelled and interrupts the statement running for it, if any. Any thread.
    package func cancel() {
        lock.withLock {
            cancelled = true
            if let attached { sqlite3_interrupt(attached) }
        }
    }

    /// True once ``cancel()`` ran.
    package var isCancelled: Bool { lock.withLock { cancelled } }

    /// Runs `body` with `connection` attached, on the connection's thread: throws `CancellationError`
    /// without running it when the call is already cancelled, and instead of whatever `body` returned or
    /// threw when the call was cancelled while it ran.
    package func run<T>(on connection: Connection, _ body: () throws -> T) throws -> T {
        let handle = connection.handle
        let refused = lock.withLock { () -> Bool in
            if cancelled { return true }
            attached = handle
            return false
        }
        if refused { throw CancellationError() }
        // An interrupt between two of `body`'s statements stops the next one too.
        let holding = connection.holdInterrupts()
        let result: Result<T, any Error> = Result { try body() }
        if holding { connection.releaseInterrupts() }
        let wasCancelled = lock.withLock { () -> Bool in
            attached = nil
            return cancelled
        }
        if wasCancelled { throw CancellationError() }
        return try result.get()
    }
}

extension CancellationLatch {
    /// An async call of blocking work: `start` schedules the work (on a queue, the writer…) and must call
    /// its completion exactly once with the work's result; the work attaches its connection to the latch it
    /// is given (``run(on:_:)``). Cancelling the awaiting task cancels that latch; a task cancelled before
    /// the call throws without starting it.
    package static func call<T: Sendable>(
        _ start: @escaping @Sendable (CancellationLatch, @escaping @Sendable (Result<T, any Error>) -> Void) -> Void
    ) async throws -> T {
        try Task.checkCancellation()
        let latch = CancellationLatch()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                start(latch) { continuation.resume(with: $0) }
            }
        } onCancel: {
            latch.cancel()
        }
    }
}

extension CancellationLatch {
    /// ``run(on:_:)`` for work of many statements (a migration), which also checks the latch from a progress
    /// handler every 1,000 SQLite instructions: a stop reaches the statement running even when its interrupt
    /// came before it started (``run(on:_:)`` keeps an interrupt in force between statements with
    /// ``Connection/holdInterrupts()``; this is the second line for long migrations).
    package func runStatements<T>(on connection: Connection, _ body: () throws -> T) throws -> T {
        let handle = connection.handle
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_progress_handler(
            handle, 1_000,
            { context in
                guard let context else { return 0 }
                return Unmanaged<CancellationLatch>.fromOpaque(context).takeUnretainedValue().isCancelled ? 1 : 0
            }, context)
        defer { sqlite3_progress_handler(handle, 0, nil, nil) }
        return try withExtendedLifetime(self) { try run(on: connection, body) }
    }
}
