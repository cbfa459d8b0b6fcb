// DatabaseHeader — fields of the 100-byte header at the start of page 1 (big-endian) that the readers need
// before they trust anything else: the page size (bytes 16–17, 1 meaning 65536) and the reserve per page
// (byte 20), which sets the usable size every B-tree formula uses.

/// Page 1's header fields.
public enum DatabaseHeader {
    /// The page size in header bytes 16–17 of `page` (1 means 65536), or nil when it is not a power of two
    /// from 512 to 65536 (or the bytes are missing).
    public static func pageSize(_ page: [UInt8]) -> Int? {
        guard let raw = ByteView(page).u16(16) else { return nil }
        let size = raw == 1 ? 65536 : Int(raw)
        return size >= 512 && size <= 65536 && size & (size - 1) == 0 ? size : nil
    }

    /// The lock-byte page of a file of `pageSize`-byte pages: the page holding byte offset 2^30, which
    /// SQLite never writes (it is neither a B-tree nor a free page, and stays zeros or absent).
    public static func lockBytePage(pageSize: Int) -> UInt32 {
        UInt32(clamping: (1 << 30) / pageSize + 1)
    }
}

extension DatabaseFile {
    /// The reserve the B-tree layer uses: header byte 20 of page 1 when it authenticates and asks for more
    /// than the codec's own reserve, else the codec's.
    ///
    /// The two differ in files SQLCipher 4 really writes: an app that sets `cipher_hmac_algorithm`,
    /// `cipher_use_hmac` or `cipher_compatibility` *after* `PRAGMA key` gets pages whose IV and HMAC sit in
    /// the last 48 (or 16) bytes while the header — and every B-tree formula SQLite applies — says 80. Using
    /// the codec's reserve there would misplace every cell near the end of a page and every overflow chunk.
    /// A header value below the codec's reserve, or leaving fewer than 480 usable bytes, is not believed.
    static func btreeReserve(fd: Int32, decoder: PageDecoder, pageOneDamaged: Bool) -> Int {
        let codec = decoder.settings.reserveBytes
        guard !pageOneDamaged, let raw = read(fd, offset: 0, count: decoder.pageSize),
            case .success(let page) = decoder.decode(raw, pageNumber: 1), let header = ByteView(page).u8(20)
        else { return codec }
        let reserve = Int(header)
        return reserve > codec && decoder.pageSize - reserve >= 480 ? reserve : codec
    }
}
