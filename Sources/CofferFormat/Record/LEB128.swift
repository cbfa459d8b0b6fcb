// LEB128 — unsigned integers seven bits a byte, low bits first; every byte but the last has its high bit set.
//
// Coffer's own encodings use it: a compressed value's dictionary id and the lengths and counts of the
// document encoding. It is not SQLite's varint (``Varint``: big-endian, nine bytes at most).

/// Encoding and decoding of unsigned LEB128 integers.
package enum LEB128 {
    /// Appends `value` to `bytes`.
    package static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// Reads the value starting at `offset` in `bytes`: the value and the offset after it, or nil when it
    /// runs past the end or would need more than `bits` bits' worth of bytes (`ceil(bits / 7)` bytes; the
    /// last one's high bits beyond `bits` are dropped, as a fixed-width reader would).
    package static func read(_ bytes: UnsafeRawBufferPointer, at offset: Int, bits: UInt64 = 64) -> (
        value: UInt64, next: Int
    )? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var position = offset
        while position >= 0, position < bytes.count {
            let byte = bytes[position]
            position += 1
            guard shift < bits else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return (value, position) }
            shift += 7
        }
        return nil
    }
}
