import SwiftSyntax
import SwiftSyntaxMacros

/// `@Table` turns a Codable struct into a table: it generates the typed column set (`Columns`, one
/// `Column<Self, PropertyType>` per stored property), the column definitions the schema is built from,
/// the table name, and `didInsert(rowID:)` for an optional integer primary key.
///
/// Why a macro: the column set must carry each property's exact Swift type so that comparing a column
/// with a value of another type, or using another table's column, fails to compile — and the user must
/// never spell a column name. Only the compiler sees both the property names and their types; a macro
/// hands them to the library without reflection or strings typed by hand.
public struct TableMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let typeName = try self.typeName(of: declaration)
        let properties = try storedProperties(of: declaration)
        let access = accessPrefix(of: declaration)
        let tableName = tableNameLiteral(node) ?? "\"\(typeName)\""

        try checkCompression(of: properties)
        let columns = properties.map {
            let compressed = $0.compression == nil ? "" : ", compressed: true"
            return
                "\(access)let \($0.identifier) = Coffer.TableColumn<\(typeName), \($0.type)>(name: \($0.nameLiteral)\(compressed))"
        }
        let definitions = properties.map { property in
            let defaultValue = property.defaultExpression.map { "Coffer.ColumnDefault(\($0) as \(property.type))" } ?? "nil"
            let compression = property.compression.map { ", compression: \($0)" } ?? ""
            return """
                Coffer.ColumnDefinition(name: \(property.nameLiteral), affinity: "\(property.affinity)", \
                isOptional: \(property.isOptional), isPrimaryKey: \(property.isPrimaryKey), \
                isUnique: \(property.isUnique), defaultValue: \(defaultValue)\(compression))
                """
        }
        var members: [DeclSyntax] = [
            """
            /// The typed columns of `\(raw: typeName)`, handed to `filter`, `order` and friends.
            \(raw: access)struct Columns: Sendable {
                \(raw: columns.joined(separator: "\n    "))
            }
            """,
            "\(raw: access)static let columns = Columns()",
            "\(raw: access)static let tableName: String = \(raw: tableName)",
            """
            \(raw: access)static let columnDefinitions: [Coffer.ColumnDefinition] = [
                \(raw: definitions.joined(separator: ",\n    "))
            ]
            """,
        ]
        let keys = properties.filter(\.isPrimaryKey)
        if keys.count == 1, let key = keys.first, key.isOptional, let wrapped = key.wrappedType,
            integerTypes.contains(wrapped)
        {
            members.append(
                """
                \(raw: access)mutating func didInsert(rowID: Int64) {
                    self.\(raw: key.identifier) = \(raw: wrapped)(truncatingIfNeeded: rowID)
                }
                """)
        }
        return members
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let conformance = protocols.isEmpty ? "" : ": Coffer.TableRecord"
        let members = try [rowReader(of: declaration), rowWriter(of: declaration)].compactMap { $0 }
        guard !members.isEmpty else {
            return protocols.isEmpty ? [] : [try ExtensionDeclSyntax("extension \(type.trimmed)\(raw: conformance) {}")]
        }
        let body = members.joined(separator: "\n\n")
        return [try ExtensionDeclSyntax("extension \(type.trimmed)\(raw: conformance) {\n\(raw: body)\n}")]
    }

    /// Refuses, at compile time, a compressed primary key (every lookup by id would decompress) and a
    /// `.dictionaries(by:)` that names no column of the table.
    private static func checkCompression(of properties: [Property]) throws {
        let names = Set(properties.map(\.nameLiteral))
        for property in properties {
            guard let compression = property.compression else { continue }
            if property.isPrimaryKey {
                throw MacroError("'\(property.identifier)' is the primary key: it cannot be compressed")
            }
            if let call = compression.as(FunctionCallExprSyntax.self),
                call.calledExpression.trimmedDescription == ".dictionaries",
                let by = call.arguments.first(where: { $0.label?.text == "by" }),
                let literal = by.expression.as(StringLiteralExprSyntax.self),
                !names.contains(literal.trimmedDescription)
            {
                throw MacroError(
                    "'\(property.identifier)' picks its dictionary by \(literal.trimmedDescription), which is no column of the table"
                )
            }
        }
    }

    /// `init(statementRow:)`, which reads each column-backed property from its column by position: the
    /// Codable path without its key lookups and container boxes. Generated only for a struct that leaves
    /// `init(from:)` to Codable and whose stored properties are plain (a property wrapper decodes
    /// differently), so that it reads exactly what `init(from:)` would; otherwise nil, and records decode
    /// through Codable.
    private static func rowReader(of declaration: some DeclGroupSyntax) throws -> String? {
        guard !declares(declaration, function: "init", firstLabel: "from"),
            let properties = try plainProperties(of: declaration)
        else { return nil }
        let access = accessPrefix(of: declaration)
        // Every column is read into a local first and the properties are assigned after the last read:
        // assigning each property as it is read makes the compiler copy the whole record out at the end
        // and destroy the original (a retain and a release per string, data or other reference).
        let reads = properties.enumerated().map { index, property in
            if let wrapped = property.wrappedType {
                return "let column\(index) = try row.decodeIfPresent(\(wrapped).self, at: \(index))"
            }
            return "let column\(index) = try row.decode(\(property.type).self, at: \(index))"
        }
        let assignments = properties.enumerated().map { index, property in "self.\(property.identifier) = column\(index)" }
        return """
            /// Reads the record from a fetched row, each property from its column (generated by `@Table`).
            \(access)init(statementRow row: Coffer.StatementRow) throws {
                \((reads + assignments).joined(separator: "\n    "))
            }
            """
    }

    /// `columnValues()`, which converts each column-backed property in place, in column order, and
    /// `bindColumns(to:then:)`, which binds each converted value straight into an insert or update
    /// statement: what record writes use, without Codable's encoder (a keyed container, a key lookup and
    /// a box per property) or an array of values. Generated on the same conditions as the reader, with
    /// `encode(to:)` left to Codable, so that both store exactly what `encode(to:)` would.
    private static func rowWriter(of declaration: some DeclGroupSyntax) throws -> String? {
        guard !declares(declaration, function: "encode", firstLabel: "to"),
            let properties = try plainProperties(of: declaration)
        else { return nil }
        let access = accessPrefix(of: declaration)
        let values = properties.map { property in
            property.isOptional
                ? "try Coffer.DatabaseValue.optionalColumnValue(self.\(property.identifier))"
                : "try Coffer.DatabaseValue.columnValue(self.\(property.identifier))"
        }
        // Each value is converted by its own statement (the overload its static type selects), then each
        // bind runs the next one inside its closure, so that text and blobs stay bound in place until
        // `body` has run the statement.
        let conversions = values.enumerated().map { index, value in "let value\(index + 1) = \(value)" }
        var binds = "try body()"
        for index in properties.indices.reversed() {
            binds = "try binder.bind(value\(index + 1), at: \(index + 1)) {\n\(binds)\n}"
        }
        return """
            /// The record's column values, in column order (generated by `@Table`).
            \(access)func columnValues() throws -> [Coffer.DatabaseValue] {
                [
                    \(values.joined(separator: ",\n        "))
                ]
            }

            /// Binds the record's columns, in column order, and runs `body` while they are bound (generated
            /// by `@Table`).
            \(access)func bindColumns(to binder: Coffer.RecordBinder, then body: () throws -> Void) throws {
                \((conversions + [binds]).joined(separator: "\n    "))
            }
            """
    }

    /// True when the type's body declares an initializer or method `name` whose first argument label is
    /// `firstLabel` (`init(from:)`, `encode(to:)`).
    private static func declares(_ declaration: some DeclGroupSyntax, function name: String, firstLabel: String) -> Bool {
        declaration.memberBlock.members.contains { member in
            if name == "init", let initializer = member.decl.as(InitializerDeclSyntax.self) {
                return initializer.signature.parameterClause.parameters.first?.firstName.text == firstLabel
            }
            if let function = member.decl.as(FunctionDeclSyntax.self), function.name.text == name {
                return function.signature.parameterClause.parameters.first?.firstName.text == firstLabel
            }
            return false
        }
    }

    /// The column-backed properties of a struct whose stored properties are all plain (no property
    /// wrapper, no implicitly unwrapped optional) and whose other stored properties have initial values;
    /// nil otherwise, and records go through Codable.
    private static func plainProperties(of declaration: some DeclGroupSyntax) throws -> [Property]? {
        guard declaration.is(StructDeclSyntax.self) else { return nil }
        let properties = try storedProperties(of: declaration)
        guard properties.allSatisfy({ !$0.type.contains("!") }) else { return nil }
        let columns = Set(properties.map(\.identifier))
        for member in declaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                !variable.modifiers.contains(where: { ["static", "class", "lazy"].contains($0.name.text) })
            else { continue }
            let plain = variable.attributes.allSatisfy {
                $0.as(AttributeSyntax.self)?.attributeName.trimmedDescription.hasSuffix("Column") == true
            }
            guard plain else { return nil }
            // A stored property that is no column must have its initial value: the reader cannot set it.
            for binding in variable.bindings {
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else { return nil }
                if let accessors = binding.accessorBlock, !isObserversOnly(accessors) { continue }
                if !columns.contains(pattern.identifier.text), binding.initializer == nil { return nil }
            }
        }
        return properties
    }

    // MARK: Reading the declaration

    /// `"public "` for a public or package type (its generated members must match), else nothing.
    private static func accessPrefix(of declaration: some DeclGroupSyntax) -> String {
        declaration.modifiers.contains { ["public", "package"].contains($0.name.text) } ? "public " : ""
    }

    private static func typeName(of declaration: some DeclGroupSyntax) throws -> String {
        if let structDecl = declaration.as(StructDeclSyntax.self) { return structDecl.name.text }
        if let classDecl = declaration.as(ClassDeclSyntax.self) { return classDecl.name.text }
        throw MacroError("@Table applies to a struct or a final class")
    }

    private static func tableNameLiteral(_ node: AttributeSyntax) -> String? {
        guard case .argumentList(let arguments) = node.arguments,
            let literal = arguments.first(where: { $0.label == nil })?.expression.as(StringLiteralExprSyntax.self)
        else { return nil }
        return literal.trimmedDescription
    }

    private static func storedProperties(of declaration: some DeclGroupSyntax) throws -> [Property] {
        let codingKeys = self.codingKeys(of: declaration)
        var properties: [Property] = []
        for member in declaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                !variable.modifiers.contains(where: { ["static", "class", "lazy"].contains($0.name.text) })
            else { continue }
            let options = ColumnOptions(variable.attributes)
            for binding in variable.bindings {
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
                if let accessors = binding.accessorBlock, !isObserversOnly(accessors) { continue }
                // Codable skips a `let` with an initial value: so does the table.
                if variable.bindingSpecifier.tokenKind == .keyword(.let), binding.initializer != nil { continue }
                guard let type = binding.typeAnnotation?.type.trimmedDescription else {
                    throw MacroError("@Table needs an explicit type on '\(pattern.identifier.text)'")
                }
                let name = pattern.identifier.text.filter { $0 != "`" }
                let nameLiteral: String
                if let codingKeys {
                    // Codable skips a property its CodingKeys leave out: so does the table.
                    guard let key = codingKeys[name] else { continue }
                    nameLiteral = key
                } else {
                    nameLiteral = "\"\(name)\""
                }
                properties.append(
                    Property(identifier: pattern.identifier.text, nameLiteral: nameLiteral, type: type, options: options))
            }
        }
        return properties
    }

    /// The column name literal of each case of a `CodingKeys` enum declared in the type (its raw value,
    /// or the case name), or nil when the type lets Codable synthesize its keys.
    private static func codingKeys(of declaration: some DeclGroupSyntax) -> [String: String]? {
        for member in declaration.memberBlock.members {
            guard let enumDecl = member.decl.as(EnumDeclSyntax.self), enumDecl.name.text == "CodingKeys" else { continue }
            var keys: [String: String] = [:]
            for caseMember in enumDecl.memberBlock.members {
                guard let caseDecl = caseMember.decl.as(EnumCaseDeclSyntax.self) else { continue }
                for element in caseDecl.elements {
                    let name = element.name.text.filter { $0 != "`" }
                    let raw = element.rawValue?.value.as(StringLiteralExprSyntax.self)?.trimmedDescription
                    keys[name] = raw ?? "\"\(name)\""
                }
            }
            return keys
        }
        return nil
    }

    private static func isObserversOnly(_ block: AccessorBlockSyntax) -> Bool {
        guard case .accessors(let list) = block.accessors else { return false }
        return list.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
    }
}

let integerTypes: Set<String> = ["Int", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32"]

/// One stored property and what `@Column` says about it.
struct Property {
    let identifier: String
    /// The column name as a Swift string literal: the coding key's raw value, or the property name.
    let nameLiteral: String
    let type: String
    let options: ColumnOptions

    var isPrimaryKey: Bool { options.primaryKey }
    var isUnique: Bool { options.unique }
    var defaultExpression: String? { options.defaultExpression }
    /// The `compressed:` argument of `@Column`, as written (`.zstd`, `.dictionary(1)`…).
    var compression: ExprSyntax? { options.compression }

    var isOptional: Bool { wrappedType != nil }

    /// `T` for `T?` and `Optional<T>`, nil for a non-optional type.
    var wrappedType: String? {
        if type.hasSuffix("?") { return String(type.dropLast()) }
        if type.hasPrefix("Optional<"), type.hasSuffix(">") { return String(type.dropFirst(9).dropLast()) }
        return nil
    }

    /// The declared SQL type: SQLite's affinity for the storage Coffer uses, or none (values are stored
    /// as encoded, e.g. raw-value enums and JSON text).
    var affinity: String {
        let base = wrappedType ?? type
        if integerTypes.contains(base) || ["Bool", "UInt", "UInt64"].contains(base) { return "INTEGER" }
        switch base {
        case "Double", "Float", "Date": return "REAL"
        case "String", "URL": return "TEXT"
        case "Data", "UUID": return "BLOB"
        default: return ""
        }
    }
}

/// The arguments of an `@Column(primaryKey:unique:default:compressed:)` attribute.
struct ColumnOptions {
    var primaryKey = false
    var unique = false
    var defaultExpression: String?
    var compression: ExprSyntax?

    init(_ attributes: AttributeListSyntax) {
        for element in attributes {
            guard let attribute = element.as(AttributeSyntax.self),
                attribute.attributeName.trimmedDescription.hasSuffix("Column"),
                case .argumentList(let arguments) = attribute.arguments
            else { continue }
            for argument in arguments {
                let value = argument.expression.trimmedDescription
                switch argument.label?.text {
                case "primaryKey": primaryKey = value == "true"
                case "unique": unique = value == "true"
                case "default": defaultExpression = value
                case "compressed" where value != "nil": compression = argument.expression.trimmed
                default: break
                }
            }
        }
    }
}

struct MacroError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
