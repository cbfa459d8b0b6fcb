/// The crash tests' workload, shared by their child process (`coffer-torture`) and their checks: transaction
/// N inserts `rows(for: N)` rows, so a reader can tell a whole transaction from a partial one.
public enum TortureRows {
    /// Rows of transaction `transaction`: 1 + (N·7919 mod 13).
    public static func rows(for transaction: Int) -> Int { 1 + (transaction * 7919) % 13 }
}
