import CofferEngine
import Foundation

/// A value a foreign key can hold, with the type both ends of the key must share.
///
/// An optional column and a non-optional one holding the same type are one key type, so a nullable
/// `authorID: Int64?` may reference `id: Int64?`; an `Int64` column may not reference a `String` one.
public protocol ForeignKeyValue: Sendable {
    /// The key type without optionality.
    associatedtype KeyBase: Hashable & Sendable
}

extension Int64: ForeignKeyValue { public typealias KeyBase = Int64 }
extension Int: ForeignKeyValue { public typealias KeyBase = Int }
extension Int32: ForeignKeyValue { public typealias KeyBase = Int32 }
extension String: ForeignKeyValue { public typealias KeyBase = String }
extension UUID: ForeignKeyValue { public typealias KeyBase = UUID }
extension Data: ForeignKeyValue { public typealias KeyBase = Data }
extension Optional: ForeignKeyValue where Wrapped: ForeignKeyValue { public typealias KeyBase = Wrapped.KeyBase }

/// A foreign key from a column of `Child` to a column of `Parent`, both holding `Key` values: the one
/// declaration a table's constraint and its associations are made from.
///
/// ```swift
/// @Table("book") struct Book: Codable {
///     @Column(primaryKey: true) var id: Int64?
///     var authorID: Int64
///     var title: String
///
///     static let authorKey = ForeignKey(columns.authorID, references: Author.columns.id, onDelete: .cascade)
///     static var constraints: [TableConstraint<Book>] { [authorKey.constraint] }
///     static let author = belongsTo(Author.self, using: authorKey)
/// }
/// extension Author { static let books = hasMany(Book.self, using: Book.authorKey) }
/// ```
public struct ForeignKey<Child: TableRecord, Parent: TableRecord, Key: Hashable & Sendable>: Sendable {
    /// The referencing column of `Child`.
    public let childColumnName: String
    /// The referenced column of `Parent` (its primary key or a UNIQUE column).
    public let parentColumnName: String
    /// What SQLite does to the child rows when their parent row is deleted.
    public let onDelete: ForeignKeyAction
    /// What SQLite does to the child rows when their parent's key changes.
    public let onUpdate: ForeignKeyAction

    /// A key from `column` to `parentColumn`; both must hold the same type (either may be optional).
    public init<ChildValue: ForeignKeyValue, ParentValue: ForeignKeyValue>(
        _ column: TableColumn<Child, ChildValue>, references parentColumn: TableColumn<Parent, ParentValue>,
        onDelete: ForeignKeyAction = .noAction, onUpdate: ForeignKeyAction = .noAction
    ) where ChildValue.KeyBase == Key, ParentValue.KeyBase == Key {
        self.childColumnName = column.name
        self.parentColumnName = parentColumn.name
        self.onDelete = onDelete
        self.onUpdate = onUpdate
    }

    /// The `FOREIGN KEY … REFERENCES …` constraint, for `Child.constraints`.
    public var constraint: TableConstraint<Child> {
        .foreignKey(
            TableColumn<Child, Key>(name: childColumnName), references: TableColumn<Parent, Key>(name: parentColumnName),
            onDelete: onDelete, onUpdate: onUpdate)
    }
}
