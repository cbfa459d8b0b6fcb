import CSQLCipher
internal import CofferTokenizer

extension Connection {
    /// Registers the `coffer` tokenizer and the `coffer_bm25` function on this connection (every
    /// connection a ``Database`` opens, after its key is proven), and the tokenizers with FTS5 where the
    /// linked SQLite has it.
    ///
    /// `fts3_tokenizer()`'s two-argument form, which turns a pointer into code, is enabled only while
    /// the C side runs its own statement with the pointer bound, and is off again before this returns:
    /// SQL from a query, or from a trigger or view in a file's schema, cannot call it.
    ///
    /// Recursive triggers are turned on too: without them an `INSERT OR REPLACE` that deletes a
    /// conflicting row fires no DELETE trigger, and a full-text index kept by triggers would keep the
    /// deleted row's terms.
    func registerFullTextSearch() throws {
        let code = coffer_fts_register(handle)
        guard code == SQLITE_OK else { throw failure(code: code, sql: "SELECT fts3_tokenizer(?, ?)") }
        let fts5 = coffer_fts5_register(handle)
        guard fts5 == SQLITE_OK else { throw failure(code: fts5, sql: "SELECT fts5(?)") }
        try executeScript("PRAGMA recursive_triggers = ON")
    }
}
