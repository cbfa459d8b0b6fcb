import CofferEngine
import CofferRecords

/// A key-value failure that concerns one item: it names the store, bucket and key.
///
/// SQLite failures (a full disk, a busy database) are still thrown as ``CofferError``; this type covers
/// what only the key-value layer can detect: a value its coder cannot encode, stored bytes that do not
/// decode as the requested type. Such a failure never changes the database: encoding happens before the
/// write transaction starts (or rolls back the whole batch), and decoding only reads.
///
/// ```swift
/// do {
///     let user = try store.value(User.self, for: "42")
/// } catch let error as KeyValueError where error.reason == .decodingFailed {
///     try store.delete("42")   // drop the stale entry and refetch
/// }
/// ```
///
/// Unlike ``CofferError``, the description contains the key: keys are the app's identifiers, and the
/// point of this error is to say which one failed. Values are never part of it.
public struct KeyValueError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: String, Sendable, Equatable {
        /// The store's coder threw while encoding a value or its metadata.
        case encodingFailed
        /// The store's coder threw while decoding stored bytes.
        case decodingFailed
        /// The stored value has a storage class the requested type cannot come from (e.g. TEXT read as `Int`).
        case typeMismatch
    }

    /// What went wrong.
    public let reason: Reason
    /// The store's name.
    public let store: String
    /// The item's bucket.
    public let bucket: String
    /// The item's key.
    public let key: String
    /// The underlying error's description, or what did not match.
    public let detail: String

    /// Creates an error.
    public init(reason: Reason, store: String, bucket: String, key: String, detail: String) {
        self.reason = reason
        self.store = store
        self.bucket = bucket
        self.key = key
        self.detail = detail
    }

    /// The reason, the key, its bucket and store, and the detail.
    public var description: String {
        "\(reason.rawValue) for key \(key.debugDescription) in bucket \(bucket.debugDescription) of store \(store.debugDescription): \(detail)"
    }
}
