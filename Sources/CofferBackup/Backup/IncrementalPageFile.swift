import CofferEngine
import CofferFormat
import CofferRecords
import Foundation

/// The data file of an incremental generation: raw page images, still encrypted, as they were in the
/// main database file after the checkpoint that preceded the backup.
///
/// Layout (all integers big-endian):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic `COFFINC1` |
/// | 8 | 4 | page size P |
/// | 12 | 4 | database size in pages after applying this file |
/// | 16 | 4 | number of records N |
/// | 20 | 12 | zero |
/// | 32 + i·(4+P) | 4 | page number of record i |
/// | 36 + i·(4+P) | P | the page's bytes |
///
/// Records are sorted by page number; pages past the database size are never stored.
enum IncrementalPageFile {
    static let magic = Array("COFFINC1".utf8)
    static let headerSize = 32

    /// Streams records into a new file at `path`.
    final class Writer {
        private let file: PageFile
        private let pageSize: Int
        private var buffer: [UInt8] = []
        private var offset = IncrementalPageFile.headerSize
        private(set) var recordCount = 0

        init(path: String, pageSize: Int) throws {
            file = try PageFile(path: path, writable: true, create: true)
            self.pageSize = pageSize
        }

        func append(pageNumber: UInt32, bytes: [UInt8]) throws {
            buffer.append(contentsOf: withUnsafeBytes(of: pageNumber.bigEndian, Array.init))
            buffer.append(contentsOf: bytes)
            recordCount += 1
            if buffer.count >= 1 << 20 { try flush() }
        }

        private func flush() throws {
            try file.write(buffer, at: offset)
            offset += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }

        /// Writes the header and fsyncs.
        func finish(pageCount: Int) throws {
            try flush()
            var header = IncrementalPageFile.magic
            for value in [UInt32(pageSize), UInt32(pageCount), UInt32(recordCount)] {
                header.append(contentsOf: withUnsafeBytes(of: value.bigEndian, Array.init))
            }
            header.append(contentsOf: [UInt8](repeating: 0, count: IncrementalPageFile.headerSize - header.count))
            try file.write(header, at: 0)
            try file.sync()
        }
    }

    /// Applies the records of the file at `path` to `target`, checking each page's HMAC first when a
    /// codec is given, and sets the target's size. Returns the database size in pages.
    @discardableResult
    static func apply(_ path: String, to target: PageFile, codec: PageDecoder?, pageSize: Int) throws -> Int {
        let source = try PageFile(path: path, writable: false)
        let header = try source.read(count: headerSize, at: 0)
        guard header.count == headerSize, Array(header[0..<8]) == magic else {
            throw CofferError(code: .corrupt, message: "\(path) is not an incremental page file")
        }
        let storedPageSize = Int(ByteView.u32(header, at: 8))
        let pageCount = Int(ByteView.u32(header, at: 12))
        let records = Int(ByteView.u32(header, at: 16))
        guard storedPageSize == pageSize else {
            throw CofferError(code: .corrupt, message: "\(path) has page size \(storedPageSize), its base \(pageSize)")
        }
        let recordSize = 4 + pageSize
        for index in 0..<records {
            let record = try source.read(count: recordSize, at: headerSize + index * recordSize)
            guard record.count == recordSize else {
                throw CofferError(code: .corrupt, message: "\(path) is truncated at record \(index)")
            }
            let pageNumber = ByteView.u32(record, at: 0)
            let page = Array(record[4...])
            guard pageNumber >= 1, Int(pageNumber) <= pageCount else {
                throw CofferError(
                    code: .corrupt, message: "\(path): record \(index) has page number \(pageNumber) outside 1…\(pageCount)")
            }
            if let codec, !page.withUnsafeBytes({ codec.libraryAccepts($0, pageNumber: pageNumber) }) {
                throw CofferError(code: .corrupt, message: "\(path): page \(pageNumber) fails its HMAC")
            }
            try target.write(page, at: (Int(pageNumber) - 1) * pageSize)
        }
        try target.truncate(to: pageCount * pageSize)
        return pageCount
    }
}
