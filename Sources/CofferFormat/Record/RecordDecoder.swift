// RecordDecoder — the SQLite record format.
//
// A record is: varint header length H (counting itself), then serial types as varints up to offset H, then
// the values back to back. Serial types:
//   0 NULL · 1,2,3,4,5,6 big-endian two's-complement integers of 1,2,3,4,6,8 bytes · 7 IEEE float64 BE ·
//   8 integer 0 · 9 integer 1 · 10,11 reserved (never written) · even N ≥ 12 BLOB of (N−12)/2 bytes ·
//   odd N ≥ 13 TEXT of (N−13)/2 bytes (in the database text encoding, carried here as raw bytes).
//
// Rejections and why (a record that fails any is not a row SQLite wrote, so it is never salvaged):
// - header length < 1 or > payload size, or the serial types overrun the header: truncated or garbled.
// - serial type 10 or 11: reserved, SQLite never writes them.
// - the values do not end exactly at the end of the payload: the payload size and the header disagree.
// - more than 32767 columns: above SQLite's hard limit.

/// One value of a salvaged row. TEXT is kept as raw bytes so that damaged, non-UTF-8 text survives unchanged.
public enum SalvagedValue: Sendable, Hashable, Codable {
    /// SQL NULL.
    case null
    /// A 64-bit integer.
    case integer(Int64)
    /// A 64-bit float.
    case real(Double)
    /// TEXT, as the raw bytes stored in the file.
    case text([UInt8])
    /// A BLOB.
    case blob([UInt8])
}

/// Decodes record payloads into values.
public enum RecordDecoder {
    /// The most columns a SQLite record can have.
    public static let maxColumns = 32767

    /// The serial types of a record (its header), or `nil` if the header is malformed.
    public static func serialTypes(_ payload: ByteView) -> (types: [UInt64], bodyStart: Int)? {
        guard let (headerLength, first) = Varint.decode(payload, at: 0), headerLength >= UInt64(first),
            headerLength <= UInt64(payload.count)
        else { return nil }
        let end = Int(headerLength)
        var offset = first
        var types: [UInt64] = []
        while offset < end {
            guard let (type, length) = Varint.decode(payload, at: offset) else { return nil }
            offset += length
            guard offset <= end, type != 10, type != 11, types.count < maxColumns else { return nil }
            types.append(type)
        }
        return (types, end)
    }

    /// The byte length of a value with serial type `type`, or `nil` for a reserved or absurd type.
    public static func contentLength(of type: UInt64) -> Int? {
        switch type {
        case 0, 8, 9: return 0
        case 1: return 1
        case 2: return 2
        case 3: return 3
        case 4: return 4
        case 5: return 6
        case 6, 7: return 8
        case 10, 11: return nil
        default:
            let length = (type - 12) / 2
            return length <= UInt64(Int32.max) ? Int(length) : nil
        }
    }

    /// Decodes a whole record payload into its values, or `nil` if it is not a well-formed record.
    /// One pass over header and body together (the checks of ``serialTypes(_:)`` and ``contentLength(of:)``),
    /// with no intermediate array of serial types.
    public static func decode(_ payload: [UInt8]) -> [SalvagedValue]? {
        let view = ByteView(payload)
        guard let (headerLength, first) = Varint.decode(view, at: 0), headerLength >= UInt64(first),
            headerLength <= UInt64(payload.count)
        else { return nil }
        let end = Int(headerLength)
        var header = first
        var offset = end
        var values: [SalvagedValue] = []
        values.reserveCapacity(end - first)
        while header < end {
            guard let (type, typeLength) = Varint.decode(view, at: header) else { return nil }
            header += typeLength
            guard header <= end, type != 10, type != 11, values.count < maxColumns,
                let length = contentLength(of: type), view.contains(offset: offset, length: length)
            else { return nil }
            values.append(value(type: type, view: view, offset: offset, length: length))
            offset += length
        }
        return offset == payload.count ? values : nil
    }

    private static func value(type: UInt64, view: ByteView, offset: Int, length: Int) -> SalvagedValue {
        switch type {
        case 0: return .null
        case 8: return .integer(0)
        case 9: return .integer(1)
        case 1...7:
            var raw: UInt64 = 0
            for index in 0..<length { raw = raw << 8 | UInt64(view.bytes[offset + index]) }
            if type == 7 { return .real(Double(bitPattern: raw)) }
            let shift = UInt64(64 - 8 * length)
            return .integer(Int64(bitPattern: raw << shift) >> Int64(shift))
        default:
            let bytes = Array(view.bytes[offset..<(offset + length)])
            return type % 2 == 0 ? .blob(bytes) : .text(bytes)
        }
    }
}
