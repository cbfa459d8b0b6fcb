/// The stored form of a value in a compressed column: what `coffer_compress` writes and
/// `coffer_decompress` reads.
///
/// A compressed value is a BLOB that names what it needs to be read back:
///
/// ```text
/// byte 0      0xC0  compressed TEXT        0xC1  compressed BLOB        0xC2  escaped BLOB
/// bytes 1…    LEB128 dictionary id (0: no dictionary), then the zstd frame without its 4-byte magic
///             number (28 B5 2F FD), which is the same in every frame and put back before decoding
/// escaped:    bytes 1… are the value's own bytes
/// ```
///
/// Everything else is stored as it is: NULL, integers, reals, TEXT that does not shrink (it stays TEXT,
/// so a reader without Coffer sees plain text), and a BLOB that does not shrink and does not begin with
/// 0xC0–0xC2. A BLOB of the app's own that begins with one of those bytes and does not shrink is
/// escaped (prefixed with 0xC2), so that no stored BLOB is ambiguous: its first byte says what it is.
///
/// The frame carries its content size (zstd's single-segment header) and neither zstd's dictionary id
/// (the header above names the dictionary in one byte for ids below 128, zstd's takes four) nor a
/// checksum: SQLCipher's per-page HMAC already authenticates the stored bytes.
package enum CompressedValue {
    /// The first byte of a compressed TEXT value.
    package static let compressedText: UInt8 = 0xC0
    /// The first byte of a compressed BLOB value.
    package static let compressedBlob: UInt8 = 0xC1
    /// The first byte of an app's BLOB that begins with one of these three bytes, stored uncompressed.
    package static let escapedBlob: UInt8 = 0xC2
    /// zstd's frame magic number, little-endian: dropped from stored frames.
    package static let frameMagic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]

    /// True when a BLOB's bytes must be escaped to be stored uncompressed.
    package static func needsEscape(firstByte: UInt8) -> Bool {
        firstByte >= compressedText && firstByte <= escapedBlob
    }

    /// Writes the escaped form of the `count` BLOB bytes at `source` into `base` (which holds `count + 1`
    /// bytes): ``escapedBlob``, then the bytes. Returns the stored bytes.
    static func writeEscaped(_ source: UnsafeRawPointer, count: Int, into base: UnsafeMutableRawPointer)
        -> UnsafeRawBufferPointer
    {
        base.storeBytes(of: escapedBlob, as: UInt8.self)
        (base + 1).copyMemory(from: source, byteCount: count)
        return UnsafeRawBufferPointer(start: base, count: count + 1)
    }

    /// The header of a stored value: its kind, dictionary id and where the frame starts; nil when the
    /// bytes are not a compressed value (an escaped or plain BLOB) or the header is malformed.
    package struct Header: Equatable {
        /// True when the value was TEXT.
        package var isText: Bool
        /// The dictionary the frame needs (0: none).
        package var dictionaryID: UInt32
        /// The offset of the frame (without its magic) in the stored bytes.
        package var frameOffset: Int
    }

    /// Reads the header of a compressed value from `bytes`; nil for anything else.
    package static func header(of bytes: UnsafeRawBufferPointer) -> Header? {
        guard let first = bytes.first, first == compressedText || first == compressedBlob,
            let (id, frameOffset) = LEB128.read(bytes, at: 1, bits: 32)
        else { return nil }
        return Header(isText: first == compressedText, dictionaryID: UInt32(truncatingIfNeeded: id), frameOffset: frameOffset)
    }
}
