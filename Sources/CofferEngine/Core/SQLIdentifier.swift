/// Quoting for SQL identifiers (table, column, index names).
///
/// Coffer never splices an identifier into SQL unquoted: it is wrapped in double quotes with embedded
/// double quotes doubled, so any string — keywords, quotes, spaces, emoji — names exactly itself.
public enum SQLIdentifier {
    /// `name` as a quoted SQL identifier: `my "table"` becomes `"my ""table"""`.
    ///
    /// ```swift
    /// SQLIdentifier.quote("order")   // "\"order\""
    /// ```
    public static func quote(_ name: String) -> String {
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

extension SQLIdentifier {
    /// `name` quoted, after checking that SQLite can represent it: not empty and without a NUL byte
    /// (SQLite reads statement text as a C string, so a NUL would cut the statement short).
    package static func validated(_ name: String) throws -> String {
        guard !name.isEmpty, !name.utf8.contains(0) else {
            throw CofferError(code: .apiMisuse, message: "invalid SQL identifier (empty or containing NUL)")
        }
        return quote(name)
    }
}
