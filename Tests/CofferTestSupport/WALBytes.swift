import Foundation

/// Edits of WAL files for tests: big-endian fields and the checksum chain, so that a test can build a
/// WAL SQLite accepts (resealed) or one whose chain breaks at a chosen frame.
public enum WALBytes {
    /// The WAL's page size (header bytes 8–11, 1 meaning 65536).
    public static func pageSize(_ wal: [UInt8]) -> Int {
        let raw = Int(u32(wal, 8))
        return raw == 1 ? 65536 : raw
    }

    /// The byte offset of frame `index` (1-based) in a WAL of `pageSize`.
    public static func frameOffset(_ index: Int, pageSize: Int) -> Int { 32 + (index - 1) * (pageSize + 24) }

    /// Big-endian 32-bit value at `offset`.
    public static func u32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Stores a big-endian 32-bit value at `offset`.
    public static func putU32(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(index))) }
    }

    /// Rewrites the header checksum and every whole frame's checksum (for frames of `pageSize`, default the
    /// header's), so SQLite's recovery accepts the edited WAL.
    public static func reseal(_ wal: inout [UInt8], pageSize: Int? = nil) {
        let size = pageSize ?? self.pageSize(wal)
        let bigEndian = wal[3] & 1 == 1
        var sums = checksum(wal[0..<24], bigEndian: bigEndian, seed: (0, 0))
        putU32(&wal, 24, sums.0)
        putU32(&wal, 28, sums.1)
        var offset = 32
        while offset + 24 + size <= wal.count {
            sums = checksum(wal[offset..<(offset + 8)], bigEndian: bigEndian, seed: sums)
            sums = checksum(wal[(offset + 24)..<(offset + 24 + size)], bigEndian: bigEndian, seed: sums)
            putU32(&wal, offset + 16, sums.0)
            putU32(&wal, offset + 20, sums.1)
            offset += 24 + size
        }
    }

    /// The frames of a WAL as (page number, commit size), in order, for whole frames.
    public static func frames(_ wal: [UInt8]) -> [(page: UInt32, commit: UInt32)] {
        let size = pageSize(wal)
        return stride(from: 32, through: wal.count - 24 - size, by: 24 + size).map { (u32(wal, $0), u32(wal, $0 + 4)) }
    }

    private static func checksum(_ bytes: ArraySlice<UInt8>, bigEndian: Bool, seed: (UInt32, UInt32)) -> (UInt32, UInt32) {
        var (s0, s1) = seed
        var index = bytes.startIndex
        func word(_ at: Int) -> UInt32 {
            let value = bytes[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return bigEndian ? value : value.byteSwapped
        }
        while index + 8 <= bytes.endIndex {
            s0 = s0 &+ word(index) &+ s1
            s1 = s1 &+ word(index + 4) &+ s0
            index += 8
        }
        return (s0, s1)
    }
}
