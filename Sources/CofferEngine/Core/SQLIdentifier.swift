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
