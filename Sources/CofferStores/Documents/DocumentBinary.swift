import CofferEngine
import CofferRecords
import Foundation

/// The bytes a document is stored as: a compact tagged encoding that keeps every ``DocumentValue`` kind
/// (dates and data included, which JSON would not).
///
/// Layout: a version byte (1), then one value. A value is a tag byte followed by its payload:
/// 0 null, 1 false, 2 true, 3 integer (8 bytes little-endian), 4 double (8 bytes, IEEE bits
/// little-endian), 5 date (a double of seconds since 1970), 6 string and 7 data (a LEB128 byte count,
/// then the bytes), 8 object (a LEB128 member count, then per member a LEB128 key length, the UTF-8
/// key and a value; keys in byte order), 9 array (a LEB128 count, then the values).
///
/// Decoding checks every length against the bytes left and stops at ``maximumDepth`` levels, so
/// damaged bytes give a ``DocumentError`` rather than a crash or a huge allocation.
enum DocumentBinary {
    static let version: UInt8 = 1
    /// The deepest nesting decoding accepts (it recurses once per level).
    static let maximumDepth = 512

    static func encode(_ value: DocumentValue) -> Data {
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(256)
        append(value, to: &bytes)
        return Data(bytes)
    }

    private static func append(_ value: DocumentValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(0)
        case .bool(let bool): bytes.append(bool ? 2 : 1)
        case .int(let int):
            bytes.append(3)
            appendFixed(UInt64(bitPattern: int), to: &bytes)
        case .double(let double):
            bytes.append(4)
            appendFixed(double.bitPattern, to: &bytes)
        case .date(let date):
            bytes.append(5)
            appendFixed(date.timeIntervalSince1970.bitPattern, to: &bytes)
        case .string(let string):
            bytes.append(6)
            appendCounted(string.utf8, to: &bytes)
        case .data(let data):
            bytes.append(7)
            appendCounted(data, to: &bytes)
        case .object(let members):
            bytes.append(8)
            LEB128.append(UInt64(members.count), to: &bytes)
            for (key, member) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                appendCounted(key.utf8, to: &bytes)
                append(member, to: &bytes)
            }
        case .array(let elements):
            bytes.append(9)
            LEB128.append(UInt64(elements.count), to: &bytes)
            for element in elements { append(element, to: &bytes) }
        }
    }

    private static func appendFixed(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// A LEB128 byte count, then the bytes, copied straight from `payload` (no intermediate array).
    private static func appendCounted<Payload: Collection>(_ payload: Payload, to bytes: inout [UInt8])
    where Payload.Element == UInt8 {
        LEB128.append(UInt64(payload.count), to: &bytes)
        bytes.append(contentsOf: payload)
    }

    /// The value in `data`, or nil when the bytes are not a well-formed encoding.
    static func decode(_ data: Data) -> DocumentValue? {
        data.withUnsafeBytes { raw -> DocumentValue? in
            var reader = Reader(bytes: raw, position: 0)
            guard reader.byte() == version, let value = reader.value(depth: 0), reader.position == raw.count else {
                return nil
            }
            return value
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var position: Int

        mutating func byte() -> UInt8? {
            guard position < bytes.count else { return nil }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func fixed() -> UInt64? {
            guard bytes.count - position >= 8 else { return nil }
            var value: UInt64 = 0
            for offset in 0..<8 { value |= UInt64(bytes[position + offset]) << UInt64(offset * 8) }
            position += 8
            return value
        }

        /// A LEB128 count, only when at most `bytes.count` (every counted item takes at least a byte).
        mutating func count() -> Int? {
            guard let (value, next) = LEB128.read(bytes, at: position) else { return nil }
            position = next
            return value <= UInt64(bytes.count - position) ? Int(value) : nil
        }

        mutating func counted() -> UnsafeRawBufferPointer? {
            guard let length = count() else { return nil }
            defer { position += length }
            return UnsafeRawBufferPointer(rebasing: bytes[position..<position + length])
        }

        mutating func value(depth: Int) -> DocumentValue? {
            guard depth <= DocumentBinary.maximumDepth, let tag = byte() else { return nil }
            switch tag {
            case 0: return .null
            case 1: return .bool(false)
            case 2: return .bool(true)
            case 3: return fixed().map { .int(Int64(bitPattern: $0)) }
            case 4: return fixed().map { .double(Double(bitPattern: $0)) }
            case 5: return fixed().map { .date(Date(timeIntervalSince1970: Double(bitPattern: $0))) }
            case 6: return counted().map { .string(String(decoding: $0, as: UTF8.self)) }
            case 7: return counted().map { .data(Data($0)) }
            case 8:
                guard let memberCount = count() else { return nil }
                var members: [String: DocumentValue] = [:]
                for _ in 0..<memberCount {
                    guard let key = counted(), let member = value(depth: depth + 1) else { return nil }
                    members[String(decoding: key, as: UTF8.self)] = member
                }
                return .object(members)
            case 9:
                guard let elementCount = count() else { return nil }
                var elements: [DocumentValue] = []
                for _ in 0..<elementCount {
                    guard let element = value(depth: depth + 1) else { return nil }
                    elements.append(element)
                }
                return .array(elements)
            default: return nil
            }
        }
    }
}
