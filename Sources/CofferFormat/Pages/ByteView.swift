// ByteView — bounds-checked, big-endian reads over bytes that came from a file.
//
// Every byte of a database file is hostile input. All structure parsers in CofferRepair read through this
// type, which returns `nil` instead of trapping when an offset or length falls outside the buffer, so a
// corrupt offset can never crash the process or read past a page.

/// A read-only, bounds-checked view over a byte buffer (typically one page).
///
/// All accessors return `nil` when the requested range is not entirely inside the buffer.
public struct ByteView: Sendable {
    /// The underlying bytes.
    public let bytes: [UInt8]

    /// Wraps `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The number of bytes in the view.
    public var count: Int { bytes.count }

    /// Whether `length` bytes starting at `offset` lie entirely inside the view.
    public func contains(offset: Int, length: Int) -> Bool {
        guard offset >= 0, length >= 0 else { return false }
        let (end, overflow) = offset.addingReportingOverflow(length)
        return !overflow && end <= bytes.count
    }

    /// The byte at `offset`.
    public func u8(_ offset: Int) -> UInt8? {
        guard contains(offset: offset, length: 1) else { return nil }
        return bytes[offset]
    }

    /// A big-endian 16-bit integer at `offset`.
    public func u16(_ offset: Int) -> UInt16? {
        guard contains(offset: offset, length: 2) else { return nil }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    /// A big-endian 32-bit integer at `offset`.
    public func u32(_ offset: Int) -> UInt32? {
        guard contains(offset: offset, length: 4) else { return nil }
        var value: UInt32 = 0
        for index in offset..<(offset + 4) { value = value << 8 | UInt32(bytes[index]) }
        return value
    }

    /// `length` bytes starting at `offset`, copied out.
    public func slice(_ offset: Int, _ length: Int) -> [UInt8]? {
        guard contains(offset: offset, length: length) else { return nil }
        return Array(bytes[offset..<(offset + length)])
    }

    /// Whether every byte of the view is zero.
    public var isAllZero: Bool { bytes.isAllZeroBytes }

    /// A big-endian 32-bit integer at `offset` of `bytes`, 0 when it does not fit (for fields the caller
    /// has already sized).
    public static func u32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        ByteView(bytes).u32(offset) ?? 0
    }
}
