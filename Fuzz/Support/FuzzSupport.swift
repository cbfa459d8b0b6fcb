// FuzzSupport — shared by every fuzz target (compiled into one module that `@testable import`s CofferFormat,
// so its internal API is reachable). Each target `Fuzz/Targets/NAME.swift` defines `fuzz_NAME(_:)`. All targets go
// into one binary (CofferRepair is compiled once); COFFER_FUZZ_TARGET picks the one the entry point calls.
//
// The property every target checks is "no trap, no sanitizer report"; each adds its own shape checks and
// calls `fuzzCheck`, which traps (so libFuzzer records the input) when a returned value breaks its contract.

import Foundation

@testable import CofferFormat

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selectedTarget(bytes)
    return 0
}

let fuzzTargets: [String: ([UInt8]) -> Void] = [
    "varint": fuzz_varint, "record": fuzz_record, "page": fuzz_page, "overflow": fuzz_overflow, "wal": fuzz_wal,
    "pagedecoder": fuzz_pagedecoder,
]

let selectedTarget: ([UInt8]) -> Void = {
    let name = ProcessInfo.processInfo.environment["COFFER_FUZZ_TARGET"] ?? ""
    guard let target = fuzzTargets[name] else {
        fatalError("set COFFER_FUZZ_TARGET to one of \(fuzzTargets.keys.sorted())")
    }
    return target
}()

/// Traps with `message` when `condition` is false: a contract broken by the code under test.
@inline(__always)
func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("fuzz property violated: \(message())") }
}

/// Whether `value` has the shape its serial type declares (SQLite record format).
func valueMatches(_ value: SalvagedValue, serialType type: UInt64) -> Bool {
    switch (type, value) {
    case (0, .null): return true
    case (1...6, .integer), (8, .integer(0)), (9, .integer(1)): return true
    case (7, .real): return true
    case (let t, .blob(let b)) where t >= 12 && t % 2 == 0: return b.count == Int((t - 12) / 2)
    case (let t, .text(let b)) where t >= 13 && t % 2 == 1: return b.count == Int((t - 13) / 2)
    default: return false
    }
}

/// Checks a decoded record against its own header: one value per serial type, each of the declared shape.
func checkRecord(_ payload: [UInt8], _ values: [SalvagedValue]) {
    guard let (types, _) = RecordDecoder.serialTypes(ByteView(payload)) else {
        fuzzCheck(false, "decode succeeded but the header does not parse")
        return
    }
    fuzzCheck(types.count == values.count, "value count \(values.count) != serial types \(types.count)")
    for (type, value) in zip(types, values) {
        fuzzCheck(valueMatches(value, serialType: type), "value \(value) does not match serial type \(type)")
    }
}

/// Pages held in memory, for targets that need a ``PageSource``.
final class MemoryPageSource: PageSource {
    let pageSize: Int
    let usableSize: Int
    let pages: [[UInt8]]
    var pageCount: UInt32 { UInt32(pages.count) }
    private(set) var reads = 0

    init(pageSize: Int, usableSize: Int, bytes: [UInt8]) {
        self.pageSize = pageSize
        self.usableSize = usableSize
        var pages: [[UInt8]] = []
        var offset = 0
        while offset + pageSize <= bytes.count {
            pages.append(Array(bytes[offset..<(offset + pageSize)]))
            offset += pageSize
        }
        self.pages = pages
    }

    func page(_ pageNumber: UInt32) -> Result<[UInt8], PageFailure> {
        reads += 1
        guard pageNumber >= 1, Int(pageNumber) <= pages.count else { return .failure(.outOfRange) }
        return .success(pages[Int(pageNumber) - 1])
    }
}

/// A scratch file for targets whose API takes a path; one per process, overwritten by each input (plain
/// write(2): no atomic rename, no fsync, so file-based targets still run hundreds of inputs a second).
func scratchFile(_ name: String, _ bytes: [UInt8]) -> String {
    let path = NSTemporaryDirectory() + "coffer-fuzz-\(getpid())-\(name)"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    if fd >= 0 {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
        close(fd)
    }
    return path
}
