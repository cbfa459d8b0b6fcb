// SQLRedaction — what a statement trace may show of a statement's SQL: its shape, never its values.
// Literals (strings, blobs, numbers) become `?` and comments go; a key pragma or an ATTACH's KEY clause
// loses everything after the keyword whatever else is asked, since SQLite accepts a key there as a string,
// an identifier or a bare word.

enum SQLRedaction {
    /// `sql` with every literal replaced by `?`, comments removed, and keys removed.
    static func redacted(_ sql: String) -> String {
        withoutKeys(withoutLiterals(sql))
    }

    /// `sql` (values included, as `sqlite3_expanded_sql` gives it) with keys removed.
    static func withoutKeys(_ sql: String) -> String {
        let bytes = Array(sql.utf8)
        let words = keywords(in: bytes)
        guard let first = words.first else { return sql }
        // `PRAGMA key`, `rekey`, `hexkey`, … with or without a schema name.
        if first.text == "PRAGMA", let name = words.dropFirst().prefix(2).first(where: { $0.text.hasSuffix("KEY") }) {
            return String(decoding: bytes[..<name.end], as: UTF8.self) + " = ?"
        }
        if first.text == "ATTACH", let key = words.first(where: { $0.text == "KEY" }) {
            return String(decoding: bytes[..<key.end], as: UTF8.self) + " ?"
        }
        return sql
    }

    /// `sql` with string, blob and numeric literals replaced by `?` and comments removed; identifiers
    /// (quoted or not) and keywords kept.
    static func withoutLiterals(_ sql: String) -> String {
        let bytes = Array(sql.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"):
                index = endOfQuoted(bytes, from: index, quote: byte)
                output.append(UInt8(ascii: "?"))
            case UInt8(ascii: "x") where isBlobStart(at: index, in: bytes),
                UInt8(ascii: "X") where isBlobStart(at: index, in: bytes):
                index = endOfQuoted(bytes, from: index + 1, quote: UInt8(ascii: "'"))
                output.append(UInt8(ascii: "?"))
            case UInt8(ascii: "\""), UInt8(ascii: "`"):
                let end = endOfQuoted(bytes, from: index, quote: byte)
                output.append(contentsOf: bytes[index..<end])
                index = end
            case UInt8(ascii: "["):
                let end = bytes[index...].firstIndex(of: UInt8(ascii: "]")).map { $0 + 1 } ?? bytes.count
                output.append(contentsOf: bytes[index..<end])
                index = end
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                index = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index = endOfBlockComment(bytes, from: index)
            case UInt8(ascii: "0")...UInt8(ascii: "9") where !isWordByte(before: index, in: bytes):
                index = endOfNumber(bytes, from: index)
                output.append(UInt8(ascii: "?"))
            case UInt8(ascii: "."):
                if index + 1 < bytes.count, isDigit(bytes[index + 1]), !isWordByte(before: index, in: bytes) {
                    index = endOfNumber(bytes, from: index)
                    output.append(UInt8(ascii: "?"))
                } else {
                    output.append(byte)
                    index += 1
                }
            default:
                output.append(byte)
                index += 1
            }
        }
        while let last = output.last, last == 0x20 || last == 0x0A || last == 0x09 || last == 0x0D { output.removeLast() }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bare words of `bytes` (keywords and unquoted identifiers), upper-cased, with where each ends.
    private static func keywords(in bytes: [UInt8]) -> [(text: String, end: Int)] {
        var words: [(text: String, end: Int)] = []
        var index = 0
        while index < bytes.count, words.count < 64 {
            if isWordByte(bytes[index]) {
                let start = index
                while index < bytes.count, isWordByte(bytes[index]) { index += 1 }
                words.append((String(decoding: bytes[start..<index], as: UTF8.self).uppercased(), index))
            } else {
                index += 1
            }
        }
        return words
    }

    /// The index just past the quoted run that starts at `start` (a doubled quote stays inside).
    private static func endOfQuoted(_ bytes: [UInt8], from start: Int, quote: UInt8) -> Int {
        var index = start + 1
        while index < bytes.count {
            if bytes[index] == quote {
                if index + 1 < bytes.count && bytes[index + 1] == quote {
                    index += 2
                    continue
                }
                return index + 1
            }
            index += 1
        }
        return bytes.count
    }

    private static func endOfBlockComment(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start + 2
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/") { return index + 2 }
            index += 1
        }
        return bytes.count
    }

    /// The index just past a numeric literal (decimal, hexadecimal, with fraction and exponent).
    private static func endOfNumber(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            let isSign =
                (byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-"))
                && index > start && (bytes[index - 1] | 0x20) == UInt8(ascii: "e")
            guard isWordByte(byte) || byte == UInt8(ascii: ".") || isSign else { break }
            index += 1
        }
        return index
    }

    /// Whether a blob literal (`x'…'`) starts at `index`.
    private static func isBlobStart(at index: Int, in bytes: [UInt8]) -> Bool {
        index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "'") && !isWordByte(before: index, in: bytes)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")) || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "$") || byte >= 0x80
    }

    private static func isWordByte(before index: Int, in bytes: [UInt8]) -> Bool {
        index > 0 && isWordByte(bytes[index - 1])
    }
}
