import CofferEngine

// SQLite's JSON functions on a text column holding JSON, in typed expressions. They need
// ``SQLiteFeature/json`` (SQLite 3.38, SQLCipher 4.5.1 and later); on SQLCipher 3.4.1 a statement using
// them throws ``ResultCode/unsupportedByLibrary`` when it is prepared.

extension TypedExpression where Value: SQLTextValue {
    /// `json_extract(expression, path)`: the value at `path` (`$.address.city`, `$.tags[0]`) as SQL reads it
    /// — text, a number, or NULL when the path is absent; an object or array comes back as its JSON text.
    /// The path is bound; a malformed document or path makes the statement throw.
    ///
    /// ```swift
    /// let cities = try Profile.filter { $0.json.jsonExtract("$.age", as: Int?.self) >= 18 }
    ///     .select { $0.json.jsonExtract("$.city", as: String?.self) }.fetchAll(db)
    /// ```
    public func jsonExtract<Result>(_ path: String, as type: Result.Type = Result.self) -> SQLExpression<Root, Result> {
        SQLExpression(
            SQLFragment(raw: "json_extract(") + sqlFragment + SQLFragment(raw: ", ") + SQLFragment(value: .text(path))
                + SQLFragment(raw: ")"))
    }

    /// `json_type(expression, path)`: `"object"`, `"array"`, `"text"`, `"integer"`, `"real"`, `"true"`,
    /// `"false"` or `"null"`; nil when the path is absent.
    public func jsonType(_ path: String = "$") -> SQLExpression<Root, String?> {
        SQLExpression(
            SQLFragment(raw: "json_type(") + sqlFragment + SQLFragment(raw: ", ") + SQLFragment(value: .text(path))
                + SQLFragment(raw: ")"))
    }

    /// `json_array_length(expression, path)`: the number of elements of the array at `path`, 0 for another
    /// value, nil when the path is absent.
    public func jsonArrayLength(_ path: String = "$") -> SQLExpression<Root, Int?> {
        SQLExpression(
            SQLFragment(raw: "json_array_length(") + sqlFragment + SQLFragment(raw: ", ")
                + SQLFragment(value: .text(path)) + SQLFragment(raw: ")"))
    }

    /// `json_valid(expression)`: true when the text is well-formed JSON.
    public var isValidJSON: SQLExpression<Root, Bool> {
        SQLExpression(SQLFragment(raw: "json_valid(") + sqlFragment + SQLFragment(raw: ")"))
    }
}
