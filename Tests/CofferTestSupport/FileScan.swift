import Foundation

/// Byte-level checks on database files.
public enum FileScan {
    /// True when `marker`'s UTF-8 bytes occur anywhere in the file (false for a missing file).
    public static func file(_ path: String, contains marker: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return data.range(of: Data(marker.utf8)) != nil
    }

    /// Overwrites page `page` (1-based) of the file with zeros, as a torn or lost write leaves it.
    public static func zeroPage(_ path: String, page: Int, pageSize: Int = 4096) throws {
        guard let handle = FileHandle(forUpdatingAtPath: path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64((page - 1) * pageSize))
        try handle.write(contentsOf: Data(count: pageSize))
    }

    /// The size of a file, 0 when it is missing.
    public static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
