/// A schema object that did not come back as it was, and why.
public struct SchemaIssue: Sendable, Codable, Equatable, CustomStringConvertible {
    /// The object's kind ("table", "virtual table", "index", "view", "trigger").
    public var kind: String
    /// Its name.
    public var name: String
    /// What happened, in a few words.
    public var reason: String

    /// Creates an issue.
    public init(kind: String, name: String, reason: String) {
        self.kind = kind
        self.name = name
        self.reason = reason
    }

    /// `kind name: reason`.
    public var description: String { "\(kind) \(name): \(reason)" }
}
