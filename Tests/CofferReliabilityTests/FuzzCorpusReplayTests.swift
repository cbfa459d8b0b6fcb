import Foundation
import XCTest

@testable import CofferRepair

/// Replays every committed fuzz input (`Fuzz/corpus/<target>/`: seeds and minimized crash inputs) through
/// the same entry points as the libFuzzer targets, in the normal suite and without sanitizers: a regression
/// of a crash the fuzzer found fails here. Properties checked as in `Fuzz/Targets/*.swift`.
final class FuzzCorpusReplayTests: XCTestCase {
    private static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/corpus")

    private func inputs(_ target: String) throws -> [(String, [UInt8])] {
        let dir = Self.corpus.appendingPathComponent(target)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        XCTAssertFalse(names.isEmpty, "no corpus for \(target)")
        return try names.map { ($0, [UInt8](try Data(contentsOf: dir.appendingPathComponent($0)))) }
    }

    private static func shapeMatches(_ value: SalvagedValue, _ type: UInt64) -> Bool {
        switch (type, value) {
        case (0, .null), (1...6, .integer), (8, .integer(0)), (9, .integer(1)), (7, .real): return true
        case (let t, .blob(let b)) where t >= 12 && t % 2 == 0: return b.count == Int((t - 12) / 2)
        case (let t, .text(let b)) where t >= 13 && t % 2 == 1: return b.count == Int((t - 13) / 2)
        default: return false
        }
    }

    private func checkRecord(_ payload: [UInt8], _ name: String) {
        guard let values = RecordDecoder.decode(payload) else { return }
        guard let (types, _) = RecordDecoder.serialTypes(ByteView(payload)) else { return XCTFail(name) }
        XCTAssertEqual(types.count, values.count, name)
        for (type, value) in zip(types, values) { XCTAssertTrue(Self.shapeMatches(value, type), "\(name): \(value) vs \(type)") }
    }

    func testVarintCorpus() throws {
        for (name, bytes) in try inputs("varint") {
            for offset in [-1, 0, 1, bytes.count - 1, bytes.count, Int.max] {
                if let decoded = Varint.decode(ByteView(bytes), at: offset) {
                    XCTAssertTrue((1...9).contains(decoded.length), name)
                }
            }
        }
    }

    func testRecordCorpus() throws {
        for (name, bytes) in try inputs("record") { checkRecord(bytes, name) }
    }

    func testPageCorpus() throws {
        for (name, bytes) in try inputs("page") {
            guard let control = bytes.first else { continue }
            let pageNumber: UInt32 = control & 1 == 1 ? 1 : 2 + UInt32(control >> 4)
            let reserve = control & 2 == 2 ? 48 : 0
            var page = Array(bytes.dropFirst())
            let pageSize = page.count <= 512 ? 512 : (page.count <= 1024 ? 1024 : 4096)
            page = Array(page.prefix(pageSize)) + [UInt8](repeating: 0, count: max(0, pageSize - page.count))
            guard let tree = BTreePage(bytes: page, pageNumber: pageNumber, usableSize: pageSize - reserve),
                let cells = tree.cells(maxPayload: 64 * (pageSize - reserve), maxPage: 64)
            else { continue }
            for cell in cells where cell.overflowPage == nil && tree.type != .tableInterior {
                checkRecord(cell.localPayload, name)
            }
        }
    }

    func testOverflowCorpus() throws {
        for (name, bytes) in try inputs("overflow") where bytes.count >= 8 {
            let view = ByteView(bytes)
            let remaining = Int((view.u32(4) ?? 0) & 0x00ff_ffff)
            let source = ReplayPages(bytes: Array(bytes.dropFirst(8)))
            if case .success(let (payload, pages)) = OverflowReader(source: source).read(
                first: view.u32(0) ?? 0, remaining: remaining)
            {
                XCTAssertEqual(payload.count, remaining, name)
                XCTAssertEqual(Set(pages).count, pages.count, name)
            }
            XCTAssertLessThanOrEqual(source.reads, Int(source.pageCount), name)
        }
    }

    func testWALCorpus() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-replay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for (name, bytes) in try inputs("wal") {
            let path = dir.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            guard let index = WALIndex(path: path, pageSize: 512) else { continue }
            XCTAssertLessThanOrEqual(index.frames.count + index.lost.count, index.committedFrames, name)
            XCTAssertTrue(index.frames.values.allSatisfy { $0.count == 1 }, name)
            for offsets in index.frames.values {
                for offset in offsets { XCTAssertLessThanOrEqual(offset + 512, UInt64(bytes.count), name) }
            }
        }
    }

    func testSalvageCorpus() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-replay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for (name, bytes) in try inputs("salvage") where bytes.count >= 512 {
            let path = dir.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            guard let salvager = try? Salvager(path: path, key: .none, useWAL: false) else { continue }
            var sink = CollectingSink()
            guard (try? salvager.run(into: &sink)) != nil else { continue }
            XCTAssertTrue(sink.finished, name)
        }
    }

    func testPageDecoderCorpus() throws {
        let settings = CipherSettings.sqlcipher3.with(pageSize: 1024)
        for (name, bytes) in try inputs("pagedecoder") {
            guard let control = bytes.first else { continue }
            let pageNumber: UInt32 = control & 1 == 1 ? 1 : 2
            var rest = Array(bytes.dropFirst())
            let salt = Array(rest.prefix(16))
            if pageNumber != 1 { rest = Array(rest.dropFirst(16)) }
            guard salt.count == 16 else { continue }
            let keys = try DerivedKeys(key: .rawKey(Data(repeating: 0x5a, count: 32)), salt: salt, settings: settings)
            let decoder = PageDecoder(settings: settings, keys: keys, pageSize: 1024)
            let raw = Array(rest.prefix(1024))
            if case .success = decoder.decode(raw, pageNumber: pageNumber) {
                XCTAssertTrue(ByteView(raw).isAllZero || decoder.authenticates(raw, pageNumber: pageNumber), name)
            }
            if name.hasPrefix("seed-p") && !name.contains("flipped") {
                XCTAssertTrue(decoder.authenticates(raw, pageNumber: pageNumber), "\(name): a real page verifies")
            }
            if name.contains("flipped") { XCTAssertEqual(decoder.decode(raw, pageNumber: pageNumber).failure, .badHMAC, name) }
        }
    }
}

extension Result {
    fileprivate var failure: Failure? { if case .failure(let error) = self { return error } else { return nil } }
}

/// 512-byte pages held in memory.
private final class ReplayPages: PageSource {
    let pageSize = 512, usableSize = 512
    let pages: [[UInt8]]
    var pageCount: UInt32 { UInt32(pages.count) }
    private(set) var reads = 0
    init(bytes: [UInt8]) { pages = stride(from: 0, to: bytes.count - 511, by: 512).map { Array(bytes[$0..<($0 + 512)]) } }
    func page(_ pageNumber: UInt32) -> Result<[UInt8], PageFailure> {
        reads += 1
        guard pageNumber >= 1, Int(pageNumber) <= pages.count else { return .failure(.outOfRange) }
        return .success(pages[Int(pageNumber) - 1])
    }
}
