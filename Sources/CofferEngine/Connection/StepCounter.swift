// StepCounter — what a connection's statements did, counted where Coffer steps them (`Statement.step()`),
// so that metrics need no SQLite trace callback: rows always (one addition), and while monitoring listens,
// statements started, a sample of their times, and the end of each transaction.

import CSQLCipher
import Dispatch

/// Told by a connection's ``StepCounter`` when a transaction ended, with the counter's running totals.
/// Implemented by monitoring (a layer above), so that the connection layer does not depend on it.
protocol StepListener: AnyObject {
    /// A statement finished and left the connection in autocommit: a transaction ended (`COMMIT`,
    /// `ROLLBACK`, a failed commit) or a statement ran outside one. `sampledNanoseconds` holds the times of
    /// the sampled statements that finished since the last call.
    func transactionEnded(statements: Int, rows: Int, sampledNanoseconds: [UInt64])
    /// The connection went: the last totals.
    func countingEnded(statements: Int, rows: Int)
}

/// Running totals of one connection's statements (they wrap; readers take differences). Touched only by the
/// thread that uses the connection.
final class StepCounter {
    /// One statement in `sampleInterval` (the first included) has its time measured.
    static let sampleInterval = 16

    /// Rows returned so far.
    @exclusivity(unchecked) var rows = 0
    /// Statements started so far, counted while a listener is set.
    @exclusivity(unchecked) private(set) var statements = 0
    /// Whether statements are counted: a listener is set.
    @exclusivity(unchecked) private(set) var isCounting = false
    @exclusivity(unchecked) private var sampleStart: UInt64 = 0
    private var samples: [UInt64] = []
    /// Kept by the counter (the listener keeps no reference back), so it lives as long as the connection.
    private var listener: StepListener?

    deinit { listener?.countingEnded(statements: statements, rows: rows) }

    /// Starts counting statements and telling `listener` of each transaction's end.
    func listen(_ listener: StepListener) {
        self.listener = listener
        isCounting = true
    }

    /// A statement takes its first step (`Statement.step()` checks `isCounting` first).
    func statementStarts() {
        if statements % Self.sampleInterval == 0 { sampleStart = DispatchTime.now().uptimeNanoseconds }
        statements &+= 1
    }

    /// A statement finished (done or failed) on the connection `handle`.
    func statementFinished(_ handle: OpaquePointer) {
        if sampleStart != 0 {
            samples.append(DispatchTime.now().uptimeNanoseconds &- sampleStart)
            sampleStart = 0
        }
        guard sqlite3_get_autocommit(handle) != 0, let listener else { return }
        listener.transactionEnded(statements: statements, rows: rows, sampledNanoseconds: samples)
        samples.removeAll(keepingCapacity: true)
    }
}
