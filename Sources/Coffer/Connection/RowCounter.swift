// RowCounter — how many rows a connection's statements have returned, counted where Coffer steps them
// (`Statement.step()`), so that monitoring can report rows read without SQLite's per-row trace callback.

/// The rows one connection's statements returned since it opened (a running total that wraps; readers take
/// differences). Touched only by the thread that uses the connection.
final class RowCounter {
    /// Rows returned so far.
    @exclusivity(unchecked) var count = 0
}
