/// Work a ``Database`` does on its writer when it opens, in one transaction, before any read or write
/// can reach the file; set through ``Configuration`` by higher layers (``Configuration/recordTypes`` in
/// Schema), so that Pool names none of their types.
///
/// Unchecked: the only non-`Sendable` part is `subjects`, an array of metatypes, which are immutable;
/// `run` captures nothing and receives them as an argument.
package struct OpenPreparation: @unchecked Sendable {
    /// What the preparation is for (the record types, for ``Configuration/recordTypes``'s getter).
    package let subjects: [Any.Type]
    /// The work, run with ``subjects`` inside the open's transaction.
    let run: @Sendable ([Any.Type], Connection) throws -> Void

    package init(subjects: [Any.Type], run: @escaping @Sendable ([Any.Type], Connection) throws -> Void) {
        self.subjects = subjects
        self.run = run
    }

    /// Runs the work on `connection` in one `BEGIN IMMEDIATE` transaction; a failure becomes a
    /// ``CofferError`` that says it happened at open, with SQLite's code and the failing SQL.
    func apply(on connection: Connection, path: String) throws {
        do {
            try connection.inTransaction(.immediate) { try run(subjects, connection) }
        } catch let error as CofferError {
            throw CofferError(
                code: error.code, message: "preparing the schema of \(path) at open failed: \(error.message)",
                sql: error.sql)
        }
    }
}
