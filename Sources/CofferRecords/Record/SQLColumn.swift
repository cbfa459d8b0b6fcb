import CofferEngine

/// A column of the table `Root`, whatever its value type (for constraint and index lists).
public protocol SQLColumn<Root>: Sendable {
    /// The table the column belongs to.
    associatedtype Root
    /// The column name.
    var name: String { get }
}

extension TableColumn: SQLColumn {}
