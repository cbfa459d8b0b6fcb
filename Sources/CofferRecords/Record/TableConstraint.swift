import CofferEngine

/// A table-level constraint, declared with the typed columns of `Root`.
///
/// ```swift
/// static var constraints: [TableConstraint<Membership>] {
///     [.primaryKey(columns.groupID, columns.userID),
///      .check(columns.role >= 0),
///      .foreignKey(columns.groupID, references: Group.columns.id, onDelete: .cascade)]
/// }
/// ```
public struct TableConstraint<Root: TableRecord>: Sendable {
    /// The constraint as SQL parts; values are written as literals, since SQLite binds nothing in a schema.
    let fragment: SQLFragment
    /// The key's columns, for a primary key constraint (upsert and record updates find rows by them).
    var primaryKeyColumnNames: [String] = []
    /// The columns of a primary key or UNIQUE constraint (the conflict targets upsert accepts).
    var uniqueColumnNames: [String] = []

    /// The constraint's SQL.
    package func sql() throws -> String { try fragment.render(.init(inlineValues: true)).sql }

    /// A primary key over several columns.
    public static func primaryKey(_ columns: any SQLColumn<Root>...) -> TableConstraint {
        TableConstraint(
            fragment: SQLFragment(raw: "PRIMARY KEY ") + columnList(columns), primaryKeyColumnNames: columns.map(\.name),
            uniqueColumnNames: columns.map(\.name))
    }

    /// A UNIQUE constraint over several columns (NULLs never conflict, as in SQLite).
    public static func unique(_ columns: any SQLColumn<Root>...) -> TableConstraint {
        TableConstraint(fragment: SQLFragment(raw: "UNIQUE ") + columnList(columns), uniqueColumnNames: columns.map(\.name))
    }

    /// A CHECK constraint over this table's columns.
    public static func check<E: TypedExpression>(_ condition: E) -> TableConstraint
    where E.Root == Root, E.Value == Bool {
        TableConstraint(fragment: SQLFragment(raw: "CHECK ") + condition.sqlFragment.parenthesized)
    }

    /// A foreign key from one column of this table to a column of `Parent`.
    public static func foreignKey<Parent, Value, ParentValue>(
        _ column: TableColumn<Root, Value>, references parentColumn: TableColumn<Parent, ParentValue>,
        onDelete: ForeignKeyAction = .noAction, onUpdate: ForeignKeyAction = .noAction
    ) -> TableConstraint {
        TableConstraint(
            fragment: SQLFragment(raw: "FOREIGN KEY ") + columnList([column]) + SQLFragment(raw: " REFERENCES ")
                + SQLFragment([.identifier(Parent.tableName)]) + SQLFragment(raw: " ") + columnList([parentColumn])
                + SQLFragment(raw: " ON DELETE \(onDelete.rawValue) ON UPDATE \(onUpdate.rawValue)"))
    }

    static func columnList(_ columns: [any SQLColumn]) -> SQLFragment {
        SQLFragment.join(columns.map { SQLFragment([.identifier($0.name)]) }, separator: ", ").parenthesized
    }
}

/// What a foreign key does when its parent row is deleted or its key changes.
public enum ForeignKeyAction: String, Sendable {
    /// Refuse at commit (SQLite's default).
    case noAction = "NO ACTION"
    /// Refuse at once.
    case restrict = "RESTRICT"
    /// Delete or update the child rows too.
    case cascade = "CASCADE"
    /// Set the child column to NULL.
    case setNull = "SET NULL"
    /// Set the child column to its default.
    case setDefault = "SET DEFAULT"
}
