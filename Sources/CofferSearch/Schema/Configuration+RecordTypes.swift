import CofferEngine
import CofferRecords

extension Configuration {
    /// The record types whose tables the database keeps up to date: opening it runs
    /// ``Connection/upgradeSchema(for:)`` for them, in one write transaction on the writer, before any
    /// read or write can reach the file — so an app needs no setup code, and a reader's first access
    /// already sees the tables. Default empty (nothing runs). Read-only opens skip the upgrade.
    ///
    /// ```swift
    /// var configuration = Configuration(encryption: .passphrase("secret"))
    /// configuration.recordTypes = [Author.self, Book.self]
    /// let database = try Database(path: "library.db", configuration: configuration)  // tables exist
    /// ```
    ///
    /// A failed upgrade (for example a new non-optional property without `@Column(default:)` on a table
    /// that has rows) fails the open with a ``CofferError`` carrying SQLite's code and the failing SQL;
    /// nothing of the upgrade is committed.
    ///
    /// An app that also has a ``Migrator`` runs it on the opened database: by then the record types'
    /// upgrade has happened, so its migrations see the tables and the added columns. A migration that must
    /// run before the upgrade (renaming a column, which the upgrade would otherwise add as a new one)
    /// belongs in a database opened without `recordTypes`, followed by
    /// ``Database/upgradeSchema(for:)`` once the Migrator is done.
    public var recordTypes: [any TableRecord.Type] {
        get { openPreparation?.subjects.compactMap { $0 as? any TableRecord.Type } ?? [] }
        set {
            openPreparation =
                newValue.isEmpty
                ? nil
                : OpenPreparation(subjects: newValue) { subjects, db in
                    try db.upgradeSchema(for: subjects.compactMap { $0 as? any TableRecord.Type })
                }
        }
    }
}
