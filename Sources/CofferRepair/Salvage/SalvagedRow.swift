// SalvagedRow — a row ready for the sink (RowFit makes it from a record).

/// A row ready for the sink: values in declaration order (possibly fewer than the table's columns).
public struct SalvagedRow: Sendable, Equatable {
    /// The rowid (nil for WITHOUT ROWID tables).
    public var rowid: Int64?
    /// Values for the table's first `values.count` columns, in declaration order.
    public var values: [SalvagedValue]

    /// Creates a row.
    public init(rowid: Int64?, values: [SalvagedValue]) {
        self.rowid = rowid
        self.values = values
    }
}
