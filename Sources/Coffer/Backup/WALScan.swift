import Foundation

/// Reads the committed frames of a WAL file the way SQLite's recovery does, without the key: the
/// 32-byte header (magic, version, page size, checkpoint sequence, salt-1, salt-2, checksum-1,
/// checksum-2), then frames of a 24-byte header (page number, database size after commit or 0,
/// salt-1, salt-2, checksum-1, checksum-2) and one page. A frame is valid when its salts are the
/// header's and its cumulative checksum (over the first 8 bytes of its header and its page, seeded by
/// the previous frame's) matches; frames after the last valid commit frame are not part of the database.
///
/// Checksum: for each pair of 32-bit words (x0, x1), s0 += x0 + s1, s1 += x1 + s0, with the words read
/// big-endian when the magic's low bit is set and little-endian otherwise.
enum WALScan {
    struct Frame {
        /// 1-based frame number.
        let index: Int
        let pageNumber: UInt32
        let page: [UInt8]
    }

    /// The committed frames of the WAL at `path` (empty when there is none or it is not a WAL).
    static func committedFrames(path: String) throws -> [Frame] {
        guard let file = try? PageFile(path: path, writable: false) else { return [] }
        let header = try file.read(count: 32, at: 0)
        guard header.count == 32 else { return [] }
        let magic = ChangedPageTracker.bigEndian(header, 0)
        guard magic == 0x377f_0682 || magic == 0x377f_0683 else { return [] }
        let bigEndianWords = magic & 1 == 1
        let pageSize = Int(ChangedPageTracker.bigEndian(header, 8))
        guard pageSize >= 512 else { return [] }
        var sums = checksum(header[0..<24], seed: (0, 0), bigEndian: bigEndianWords)
        guard sums == (ChangedPageTracker.bigEndian(header, 24), ChangedPageTracker.bigEndian(header, 28)) else { return [] }
        let salts = (ChangedPageTracker.bigEndian(header, 16), ChangedPageTracker.bigEndian(header, 20))
        var pending: [Frame] = []
        var committed: [Frame] = []
        var index = 1
        while true {
            let offset = 32 + (index - 1) * (pageSize + 24)
            let frame = try file.read(count: pageSize + 24, at: offset)
            guard frame.count == pageSize + 24,
                  ChangedPageTracker.bigEndian(frame, 8) == salts.0, ChangedPageTracker.bigEndian(frame, 12) == salts.1
            else { break }
            sums = checksum(frame[0..<8], seed: sums, bigEndian: bigEndianWords)
            sums = checksum(frame[24...], seed: sums, bigEndian: bigEndianWords)
            guard sums == (ChangedPageTracker.bigEndian(frame, 16), ChangedPageTracker.bigEndian(frame, 20)) else { break }
            pending.append(Frame(index: index, pageNumber: ChangedPageTracker.bigEndian(frame, 0), page: Array(frame[24...])))
            if ChangedPageTracker.bigEndian(frame, 4) != 0 {
                committed += pending
                pending.removeAll()
            }
            index += 1
        }
        return committed
    }

    private static func checksum(_ bytes: ArraySlice<UInt8>, seed: (UInt32, UInt32), bigEndian: Bool) -> (UInt32, UInt32) {
        var (s0, s1) = seed
        bytes.withUnsafeBytes { raw in
            let words = raw.count / 8
            for pair in 0..<words {
                var x0 = raw.loadUnaligned(fromByteOffset: pair * 8, as: UInt32.self)
                var x1 = raw.loadUnaligned(fromByteOffset: pair * 8 + 4, as: UInt32.self)
                if bigEndian {
                    x0 = UInt32(bigEndian: x0)
                    x1 = UInt32(bigEndian: x1)
                } else {
                    x0 = UInt32(littleEndian: x0)
                    x1 = UInt32(littleEndian: x1)
                }
                s0 = s0 &+ x0 &+ s1
                s1 = s1 &+ x1 &+ s0
            }
        }
        return (s0, s1)
    }
}
