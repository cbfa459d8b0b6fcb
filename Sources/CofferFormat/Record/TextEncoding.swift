// TextEncoding — a database's text encoding (header offset 56) and SQLite's own UTF-16 → UTF-8 conversion.
//
// A UTF-16 database stores every TEXT value, including sqlite_master's names and SQL, as UTF-16. Repair
// writes a UTF-8 database, so text is converted exactly as SQLite converts it when an application reads the
// value with sqlite3_column_text (utf.c): code units are read in the file's byte order, a surrogate takes
// the next unit whatever it is, an odd trailing byte is ignored, and every resulting code point is written
// as UTF-8 (lone surrogates as three bytes). The salvaged value is therefore what the original database
// returned, byte for byte.

/// The text encoding a database declares in its header.
public enum TextEncoding: UInt32, Sendable, Codable {
    /// UTF-8 (header value 1, or 0 in a file that never stored text).
    case utf8 = 1
    /// UTF-16, little-endian.
    case utf16le = 2
    /// UTF-16, big-endian.
    case utf16be = 3

    /// The encoding that page 1's header declares (offset 56), or nil when the value is not one of SQLite's.
    public init?(header page1: [UInt8]) {
        guard let raw = ByteView(page1).u32(56) else { return nil }
        self.init(rawValue: raw == 0 ? 1 : raw)
    }

    /// `value` with its TEXT converted to UTF-8 (other values unchanged).
    public func utf8(_ value: SalvagedValue) -> SalvagedValue {
        guard self != .utf8, case .text(let bytes) = value else { return value }
        return .text(Self.utf8(fromUTF16: bytes, bigEndian: self == .utf16be))
    }

    /// SQLite's UTF-16 → UTF-8 conversion of `bytes`.
    static func utf8(fromUTF16 bytes: [UInt8], bigEndian: Bool) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 2)
        let end = bytes.count & ~1
        var index = 0
        func unit() -> UInt32 {
            defer { index += 2 }
            let first = UInt32(bytes[index])
            let second = UInt32(bytes[index + 1])
            return bigEndian ? first << 8 | second : second << 8 | first
        }
        while index < end {
            var code = unit()
            if code >= 0xD800, code < 0xE000, index < end {
                let next = unit()
                code = (next & 0x03FF) + ((code & 0x003F) << 10) + (((code & 0x03C0) + 0x0040) << 10)
            }
            switch code {
            case ..<0x80:
                output.append(UInt8(code))
            case ..<0x800:
                output.append(UInt8(0xC0 | (code >> 6)))
                output.append(UInt8(0x80 | (code & 0x3F)))
            case ..<0x10000:
                output.append(UInt8(0xE0 | (code >> 12)))
                output.append(UInt8(0x80 | ((code >> 6) & 0x3F)))
                output.append(UInt8(0x80 | (code & 0x3F)))
            default:
                output.append(UInt8(truncatingIfNeeded: 0xF0 | ((code >> 18) & 0x07)))
                output.append(UInt8(0x80 | ((code >> 12) & 0x3F)))
                output.append(UInt8(0x80 | ((code >> 6) & 0x3F)))
                output.append(UInt8(0x80 | (code & 0x3F)))
            }
        }
        return output
    }
}
