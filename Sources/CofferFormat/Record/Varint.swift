// Varint — SQLite's variable-length integer.
//
// 1 to 9 bytes, big-endian. Each of the first eight bytes contributes its low 7 bits and continues while its
// high bit is set; a ninth byte, if reached, contributes all 8 bits. The result is a 64-bit two's-complement
// value (rowids are signed). A varint that would run past the end of its buffer is rejected.

/// Decoding of SQLite varints.
public enum Varint {
    /// Decodes the varint at `offset` in `view`: its value and its length in bytes, or `nil` if truncated.
    public static func decode(_ view: ByteView, at offset: Int) -> (value: UInt64, length: Int)? {
        var value: UInt64 = 0
        for index in 0..<8 {
            guard let byte = view.u8(offset &+ index) else { return nil }
            value = value << 7 | UInt64(byte & 0x7f)
            if byte & 0x80 == 0 { return (value, index + 1) }
        }
        guard let last = view.u8(offset &+ 8) else { return nil }
        return (value << 8 | UInt64(last), 9)
    }
}
