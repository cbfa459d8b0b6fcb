import CofferEngine
import CofferRecords
import Foundation

/// A condition on documents, built from ``DocumentField``s and combined with `&&`, `||` and `!`.
///
/// ```swift
/// let adults = DocumentField("age") >= 18 && !DocumentField("tags[]").isIn(["banned", "bot"])
/// let smiths = DocumentField("last").endsWith("SMITH", caseInsensitive: true)
/// let anywhere = DocumentPredicate.anyAttribute(equalTo: "Boston")   // NanoStore's value search
/// ```
///
/// A condition on a path holds when **some** value at that path satisfies it, so on an array path
/// (`tags[]`) it means "any element". Comparisons only see values of the compared value's kind
/// (`age > 30` ignores a string age); numbers compare by value whether integers or doubles.
public indirect enum DocumentPredicate: Sendable, Hashable {
    /// Every document.
    case all
    /// Some value at the path compares with the value as `comparison` says.
    case compare(DocumentPath?, Comparison, DocumentValue)
    /// Some value at the path lies between the bounds (inclusive), both of one kind.
    case between(DocumentPath?, DocumentValue, DocumentValue)
    /// Some value at the path equals one of the values.
    case isIn(DocumentPath?, [DocumentValue])
    /// Some string at the path matches (see ``StringMatch``).
    case string(DocumentPath?, StringMatch, String, caseInsensitive: Bool)
    /// The path holds an explicit ``DocumentValue/null``.
    case isNull(DocumentPath)
    /// The path holds anything (an explicit null included).
    case exists(DocumentPath)
    /// The document's key equals the string (no match kind) or matches it; see ``key(_:)`` and ``keyMatches(_:_:)``.
    case key(StringMatch?, String)
    /// The document is in the named bag (see ``DocumentStore/add(_:toBag:)``).
    case inBag(String)
    /// Both hold.
    case and([DocumentPredicate])
    /// Either holds.
    case or([DocumentPredicate])
    /// It does not hold.
    case not(DocumentPredicate)

    /// A comparison operator.
    public enum Comparison: String, Sendable, Hashable {
        /// Equal.
        case equal = "="
        /// Present and not equal.
        case notEqual = "<>"
        /// Less than.
        case less = "<"
        /// Less than or equal.
        case lessOrEqual = "<="
        /// Greater than.
        case greater = ">"
        /// Greater than or equal.
        case greaterOrEqual = ">="
    }

    /// How a string matches: `%`, `_` and `\` in the pattern are plain characters, NUL included.
    public enum StringMatch: Sendable, Hashable {
        /// The string starts with the pattern.
        case beginsWith
        /// The string contains the pattern.
        case contains
        /// The string ends with the pattern.
        case endsWith
    }

    /// The path is absent (not even an explicit null).
    public static func isMissing(_ path: DocumentPath) -> DocumentPredicate { .not(.exists(path)) }

    /// Some attribute, whatever its path, compares with `value` (NanoStore's value search).
    public static func anyAttribute(_ comparison: Comparison = .equal, _ value: DocumentValue) -> DocumentPredicate {
        .compare(nil, comparison, value)
    }

    /// Some attribute, whatever its path, equals `value`.
    public static func anyAttribute(equalTo value: DocumentValue) -> DocumentPredicate { .compare(nil, .equal, value) }

    /// Some string attribute, whatever its path, matches `pattern`.
    public static func anyAttribute(
        _ match: StringMatch, _ pattern: String, caseInsensitive: Bool = false
    ) -> DocumentPredicate {
        .string(nil, match, pattern, caseInsensitive: caseInsensitive)
    }

    /// The document's key is `key`.
    public static func key(_ key: String) -> DocumentPredicate { .key(nil, key) }

    /// The document's key matches `pattern` (case-sensitive).
    public static func keyMatches(_ match: StringMatch, _ pattern: String) -> DocumentPredicate { .key(match, pattern) }

    /// A condition on the attribute at `path`; also written `DocumentField(path)`.
    public static func field(_ path: DocumentPath) -> DocumentField { DocumentField(path) }

    /// Both hold.
    public static func && (lhs: DocumentPredicate, rhs: DocumentPredicate) -> DocumentPredicate { .and([lhs, rhs]) }
    /// Either holds.
    public static func || (lhs: DocumentPredicate, rhs: DocumentPredicate) -> DocumentPredicate { .or([lhs, rhs]) }
    /// It does not hold.
    public static prefix func ! (operand: DocumentPredicate) -> DocumentPredicate { .not(operand) }
}

/// An attribute path to build a ``DocumentPredicate`` on.
///
/// ```swift
/// DocumentField("address.city") == "Boston"
/// DocumentField("age").between(30, 40)
/// DocumentField("tags[]").isIn(["admin", "owner"])    // any element
/// DocumentField("nickname").isMissing
/// ```
public struct DocumentField: Sendable, Hashable {
    /// The path.
    public let path: DocumentPath

    /// A field at `path` (`"author.name"`, `"tags[]"`).
    public init(_ path: DocumentPath) { self.path = path }

    /// Some value at the path equals `rhs`.
    public static func == (lhs: DocumentField, rhs: DocumentValue) -> DocumentPredicate { .compare(lhs.path, .equal, rhs) }
    /// The path holds a value, and none equals `rhs`.
    public static func != (lhs: DocumentField, rhs: DocumentValue) -> DocumentPredicate {
        .compare(lhs.path, .notEqual, rhs)
    }
    /// Some value of `rhs`'s kind at the path is less than it.
    public static func < (lhs: DocumentField, rhs: DocumentValue) -> DocumentPredicate { .compare(lhs.path, .less, rhs) }
    /// Some value of `rhs`'s kind at the path is at most it.
    public static func <= (lhs: DocumentField, rhs: DocumentValue) -> DocumentPredicate {
        .compare(lhs.path, .lessOrEqual, rhs)
    }
    /// Some value of `rhs`'s kind at the path is greater than it.
    public static func > (lhs: DocumentField, rhs: DocumentValue) -> DocumentPredicate { .compare(lhs.path, .greater, rhs) }
    /// Some value of `rhs`'s kind at the path is at least it.
    public static func >= (lhs: DocumentField, rhs: DocumentValue) -> DocumentPredicate {
        .compare(lhs.path, .greaterOrEqual, rhs)
    }

    /// Between `lower` and `upper`, inclusive.
    public func between(_ lower: DocumentValue, _ upper: DocumentValue) -> DocumentPredicate {
        .between(path, lower, upper)
    }
    /// Equal to one of `values`.
    public func isIn(_ values: [DocumentValue]) -> DocumentPredicate { .isIn(path, values) }
    /// A string starting with `prefix`.
    public func beginsWith(_ prefix: String, caseInsensitive: Bool = false) -> DocumentPredicate {
        .string(path, .beginsWith, prefix, caseInsensitive: caseInsensitive)
    }
    /// A string containing `part`.
    public func contains(_ part: String, caseInsensitive: Bool = false) -> DocumentPredicate {
        .string(path, .contains, part, caseInsensitive: caseInsensitive)
    }
    /// A string ending with `suffix`.
    public func endsWith(_ suffix: String, caseInsensitive: Bool = false) -> DocumentPredicate {
        .string(path, .endsWith, suffix, caseInsensitive: caseInsensitive)
    }
    /// An explicit null.
    public var isNull: DocumentPredicate { .isNull(path) }
    /// Absent (not even an explicit null).
    public var isMissing: DocumentPredicate { .isMissing(path) }
    /// Present (an explicit null included).
    public var exists: DocumentPredicate { .exists(path) }
}
