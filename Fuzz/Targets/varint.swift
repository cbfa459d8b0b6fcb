// Fuzz target: Varint.decode at every offset. Compared with a straightforward reference decoder.

@testable import CofferFormat

func fuzz_varint(_ bytes: [UInt8]) {
    let view = ByteView(bytes)
    for offset in [-1, 0, 1, bytes.count - 1, bytes.count, Int.max] {
        let decoded = Varint.decode(view, at: offset)
        var reference: (UInt64, Int)?
        if offset >= 0, offset < bytes.count {
            var value: UInt64 = 0
            var index = 0
            while index < 9, offset + index < bytes.count {
                let byte = bytes[offset + index]
                if index == 8 {
                    value = value << 8 | UInt64(byte)
                    reference = (value, 9)
                    break
                }
                value = value << 7 | UInt64(byte & 0x7f)
                if byte & 0x80 == 0 {
                    reference = (value, index + 1)
                    break
                }
                index += 1
            }
        }
        fuzzCheck(decoded?.value == reference?.0 && decoded?.length == reference?.1, "varint mismatch at \(offset)")
        if let decoded { fuzzCheck((1...9).contains(decoded.length), "varint length \(decoded.length)") }
    }
}
