import CofferEngine
import CofferRecords

/// Where an attribute sits in a document: object keys and array steps from the root.
///
/// Written as a string, keys are joined by `.` and `[]` stands for "every element of the array":
/// `"author.name"`, `"tags[]"`, `"authors[].name"`. A key that itself contains `.`, `[`, `]` or `\` is
/// written with a `\` before those characters, or built from components:
///
/// ```swift
/// let city: DocumentPath = "address.city"
/// let dotted = DocumentPath([.key("v1.2"), .key("notes")])   // written "v1\.2.notes"
/// ```
///
/// The string form is what the attribute index stores, so two paths are equal exactly when their
/// components are.
public struct DocumentPath: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// One step of a path.
    public enum Component: Hashable, Sendable {
        /// An object member.
        case key(String)
        /// Every element of an array.
        case elements
    }

    /// The steps from the document's root; empty for the root itself.
    public let components: [Component]
    /// The path as the attribute index stores it (see the type's description).
    public let description: String

    /// A path made of `components`.
    public init(_ components: [Component]) {
        self.components = components
        description = Self.render(components)
    }

    /// Parses the string form: `.` separates keys, `[]` is an array step, `\` makes the next character
    /// part of a key. A `[` not followed by `]`, and a trailing `\`, are kept as plain characters.
    public init(_ string: String) {
        var components: [Component] = []
        var key = ""
        var open = false  // a key is being read (a character or a `.` came since the last `[]`)
        var characters = string[...]
        while let character = characters.popFirst() {
            switch character {
            case "\\":
                key.append(characters.popFirst() ?? "\\")
                open = true
            case ".":
                if open || components.last != .elements { components.append(.key(key)) }
                key = ""
                open = true
            case "[" where characters.first == "]":
                characters.removeFirst()
                if open { components.append(.key(key)) }
                components.append(.elements)
                key = ""
                open = false
            default:
                key.append(character)
                open = true
            }
        }
        if open { components.append(.key(key)) }
        self.init(components)
    }

    /// Parses a path literal.
    public init(stringLiteral value: String) { self.init(value) }

    /// The path one step further.
    public func appending(_ component: Component) -> DocumentPath { DocumentPath(components + [component]) }

    /// The root of a document.
    public static let root = DocumentPath([Component]())

    static func render(_ components: [Component]) -> String {
        var result = ""
        for (position, component) in components.enumerated() {
            switch component {
            case .elements:
                result += "[]"
            case .key(let key):
                if position > 0 { result += "." }
                result += escape(key)
            }
        }
        return result
    }

    /// `key` with `\` before `.`, `[`, `]` and `\`.
    static func escape(_ key: String) -> String {
        // Bytes, not Characters: the common case (nothing to escape) skips grapheme breaking.
        guard key.utf8.contains(where: { $0 == 0x2E || $0 == 0x5B || $0 == 0x5D || $0 == 0x5C }) else { return key }
        var result = ""
        for character in key {
            if character == "." || character == "[" || character == "]" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result
    }
}
