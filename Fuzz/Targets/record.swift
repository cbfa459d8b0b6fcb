// Fuzz target: a record (header + body) → values. Every value returned has its serial type's shape.

@testable import CofferFormat

func fuzz_record(_ bytes: [UInt8]) {
    if let values = RecordDecoder.decode(bytes) { checkRecord(bytes, values) }
    _ = RecordDecoder.serialTypes(ByteView(bytes))
}
