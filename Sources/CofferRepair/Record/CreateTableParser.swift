// CreateTableParser — a small, tolerant reader of CREATE TABLE statements taken from sqlite_master.
//
// The SQL is untrusted (it comes from a damaged file). It is only tokenized here, never executed; the
// writer later runs it as exactly one statement. What is extracted:
// - the column list: name, declared type, affinity (SQLite's rules, in order: type contains "INT" →
//   INTEGER; "CHAR", "CLOB" or "TEXT" → TEXT; "BLOB" or no type → BLOB; "REAL", "FLOA" or "DOUB" → REAL;
//   otherwise NUMERIC);
// - the rowid alias: a column whose declared type is exactly INTEGER and that is the single PRIMARY KEY
//   (column constraint not followed by DESC, or a one-column table constraint), in a rowid table;
// - WITHOUT ROWID after the closing parenthesis, and the PRIMARY KEY columns (the leading fields of each
//   record of a WITHOUT ROWID table's B-tree, in PRIMARY KEY order, followed by the other columns).
// Anything it does not understand yields `nil` (the entry is then treated as unknown, not guessed).

/// Column affinity.
public enum Affinity: String, Sendable, Codable {
    /// INTEGER affinity.
    case integer
    /// TEXT affinity.
    case text
    /// BLOB (none) affinity.
    case blob
    /// REAL affinity.
    case real
    /// NUMERIC affinity.
    case numeric

    /// The affinity SQLite gives a declared type.
    public init(declaredType: String) {
        let type = declaredType.uppercased()
        if type.contains("INT") {
            self = .integer
        } else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") {
            self = .text
        } else if type.contains("BLOB") || type.isEmpty {
            self = .blob
        } else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") {
            self = .real
        } else {
            self = .numeric
        }
    }
}

/// One column of a table.
public struct ColumnDescription: Sendable, Codable, Equatable {
    /// The column name, unquoted.
    public var name: String
    /// The declared type, as written.
    public var declaredType: String
    /// Its affinity.
    public var affinity: Affinity
}

/// What CreateTableParser extracts.
public struct ParsedCreateTable: Sendable, Equatable {
    /// Table name, unquoted.
    public var name: String
    /// Columns in declaration order.
    public var columns: [ColumnDescription]
    /// Index of the INTEGER PRIMARY KEY column (rowid alias), if any.
    public var rowidAliasColumn: Int?
    /// Whether the table is WITHOUT ROWID.
    public var withoutRowid: Bool
    /// Column indexes of the PRIMARY KEY, in key order.
    public var primaryKeyColumns: [Int]
}

/// Parses CREATE TABLE statements.
public enum CreateTableParser {
    /// Splits SQL into tokens: identifiers/keywords (unquoted), quoted identifiers, strings, punctuation.
    /// Comments and whitespace are skipped.
    static func tokenize(_ sql: String) -> [String]? {
        var tokens: [String] = []
        let chars = Array(sql.unicodeScalars)
        var index = 0
        while index < chars.count {
            let char = chars[index]
            if char.properties.isWhitespace {
                index += 1
            } else if char == "-", index + 1 < chars.count, chars[index + 1] == "-" {
                while index < chars.count, chars[index] != "\n" { index += 1 }
            } else if char == "/", index + 1 < chars.count, chars[index + 1] == "*" {
                index += 2
                while index + 1 < chars.count, !(chars[index] == "*" && chars[index + 1] == "/") { index += 1 }
                index += 2
            } else if char == "\"" || char == "`" || char == "[" || char == "'" {
                let close: Unicode.Scalar = char == "[" ? "]" : char
                var text = ""
                index += 1
                var closed = false
                while index < chars.count {
                    if chars[index] == close {
                        if close != "]", index + 1 < chars.count, chars[index + 1] == close {
                            text.unicodeScalars.append(close)
                            index += 2
                            continue
                        }
                        closed = true
                        index += 1
                        break
                    }
                    text.unicodeScalars.append(chars[index])
                    index += 1
                }
                guard closed else { return nil }
                tokens.append(char == "'" ? "'" + text : "\u{1}" + text)
            } else if char.properties.isAlphabetic || char == "_" || char.value >= 0x80 {
                var text = ""
                while index < chars.count,
                    chars[index].properties.isAlphabetic || chars[index].properties.numericType != nil
                        || chars[index] == "_" || chars[index] == "$" || chars[index].value >= 0x80
                {
                    text.unicodeScalars.append(chars[index])
                    index += 1
                }
                tokens.append(text)
            } else {
                tokens.append(String(char))
                index += 1
            }
        }
        return tokens
    }

    /// The identifier a token denotes (quoted identifiers lose their marker).
    static func identifier(_ token: String) -> String {
        token.hasPrefix("\u{1}") ? String(token.dropFirst()) : token
    }

    static let columnConstraintWords: Set<String> = [
        "CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK", "DEFAULT", "COLLATE", "REFERENCES",
        "GENERATED", "AS",
    ]
    static let tableConstraintWords: Set<String> = ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"]

    /// Parses a CREATE TABLE statement, or returns `nil` if it is not one this parser understands.
    public static func parse(_ sql: String) -> ParsedCreateTable? {
        guard let tokens = tokenize(sql), tokens.count >= 4 else { return nil }
        var index = 0
        func upper(_ at: Int) -> String { at < tokens.count ? tokens[at].uppercased() : "" }
        guard upper(0) == "CREATE" else { return nil }
        index = 1
        if upper(index) == "TEMP" || upper(index) == "TEMPORARY" { index += 1 }
        guard upper(index) == "TABLE" else { return nil }
        index += 1
        if upper(index) == "IF", upper(index + 1) == "NOT", upper(index + 2) == "EXISTS" { index += 3 }
        guard index < tokens.count else { return nil }
        var name = identifier(tokens[index])
        index += 1
        if index < tokens.count, tokens[index] == "." {
            guard index + 1 < tokens.count else { return nil }
            name = identifier(tokens[index + 1])
            index += 2
        }
        guard index < tokens.count, tokens[index] == "(" else { return nil }
        index += 1
        // Split the body into top-level comma-separated definitions.
        var definitions: [[String]] = [[]]
        var depth = 0
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            if token == "(" { depth += 1 }
            if token == ")" {
                if depth == 0 { break }
                depth -= 1
            }
            if token == ",", depth == 0 {
                definitions.append([])
            } else {
                definitions[definitions.count - 1].append(token)
            }
        }
        guard depth == 0 else { return nil }
        let tail = tokens[index...].map { $0.uppercased() }
        let withoutRowid = tail.starts(with: ["WITHOUT", "ROWID"])
        var columns: [ColumnDescription] = []
        var primaryKey: [Int] = []
        var aliasCandidate: Int?
        var tablePrimaryKeyNames: [String] = []
        for definition in definitions {
            guard let first = definition.first else { return nil }
            if tableConstraintWords.contains(first.uppercased()), !first.hasPrefix("\u{1}") {
                if let at = definition.firstIndex(where: { $0.uppercased() == "PRIMARY" }),
                    let open = definition[at...].firstIndex(of: "(")
                {
                    var names: [String] = []
                    var position = open + 1
                    var expectName = true
                    while position < definition.count, definition[position] != ")" {
                        if definition[position] == "," {
                            expectName = true
                        } else if expectName {
                            names.append(identifier(definition[position]))
                            expectName = false
                        }
                        position += 1
                    }
                    tablePrimaryKeyNames = names
                }
                continue
            }
            var position = 1
            var typeWords: [String] = []
            while position < definition.count,
                !columnConstraintWords.contains(definition[position].uppercased()) || definition[position].hasPrefix("\u{1}")
            {
                if definition[position] == "(" {
                    while position < definition.count, definition[position] != ")" {
                        typeWords.append(definition[position])
                        position += 1
                    }
                }
                if position < definition.count { typeWords.append(definition[position]) }
                position += 1
            }
            let declared = typeWords.map(identifier).joined(separator: " ")
                .replacingOccurrences(of: " ( ", with: "(").replacingOccurrences(of: " )", with: ")")
                .replacingOccurrences(of: " , ", with: ",")
            let column = ColumnDescription(
                name: identifier(first), declaredType: declared, affinity: Affinity(declaredType: declared))
            let constraints = definition[position...].map { $0.uppercased() }
            if let at = constraints.firstIndex(of: "PRIMARY"), at + 1 < constraints.count,
                constraints[at + 1] == "KEY"
            {
                primaryKey = [columns.count]
                let descending = at + 2 < constraints.count && constraints[at + 2] == "DESC"
                if declared.uppercased() == "INTEGER", !descending { aliasCandidate = columns.count }
            }
            columns.append(column)
        }
        guard !columns.isEmpty else { return nil }
        if !tablePrimaryKeyNames.isEmpty {
            let lowered = columns.map { $0.name.lowercased() }
            primaryKey = tablePrimaryKeyNames.compactMap { lowered.firstIndex(of: $0.lowercased()) }
            guard primaryKey.count == tablePrimaryKeyNames.count else { return nil }
            aliasCandidate = nil
            if primaryKey.count == 1, let only = primaryKey.first,
                columns[only].declaredType.uppercased() == "INTEGER"
            {
                aliasCandidate = only
            }
        }
        if withoutRowid { guard !primaryKey.isEmpty else { return nil } }
        return ParsedCreateTable(
            name: name, columns: columns, rowidAliasColumn: withoutRowid ? nil : aliasCandidate,
            withoutRowid: withoutRowid, primaryKeyColumns: primaryKey)
    }
}
