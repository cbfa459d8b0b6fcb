import CofferEngine
import CofferRecords

/// A document-store failure that SQLite cannot report: a document over the store's limits, a value
/// that does not encode or decode, a name the store cannot use.
///
/// Nothing is written when one is thrown: documents are checked and encoded before the write
/// transaction starts, and a failure inside a batch rolls the whole batch back.
///
/// ```swift
/// do {
///     try people.put(hugeDocument, for: "p1")
/// } catch let error as DocumentError where error.reason == .tooManyAttributes {
///     // split it
/// }
/// ```
public struct DocumentError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: String, Sendable, Equatable {
        /// The document nests objects and arrays deeper than ``DocumentStore/Limits/maximumDepth``.
        case nestingTooDeep
        /// The document has more attributes than ``DocumentStore/Limits/maximumAttributeCount``.
        case tooManyAttributes
        /// A `Codable` value did not encode.
        case encodingFailed
        /// A stored document did not decode as the requested type, or its bytes are damaged.
        case decodingFailed
        /// A store or bag name that cannot be used (it contains a NUL character).
        case invalidName
        /// A predicate that cannot be evaluated (comparing with an object, bounds of two kinds).
        case invalidPredicate
    }

    /// What went wrong.
    public let reason: Reason
    /// The store's name.
    public let store: String
    /// The document's key, when the failure concerns one.
    public let key: String?
    /// What exceeded a limit or the underlying error's description. Values are never part of it.
    public let detail: String

    /// Creates an error.
    public init(reason: Reason, store: String, key: String?, detail: String) {
        self.reason = reason
        self.store = store
        self.key = key
        self.detail = detail
    }

    /// The reason, the key and store, and the detail.
    public var description: String {
        let subject = key.map { "key \($0.debugDescription) in " } ?? ""
        return "\(reason.rawValue) for \(subject)document store \(store.debugDescription): \(detail)"
    }
}
