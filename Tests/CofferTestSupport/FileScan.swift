import Foundation

/// Byte-level checks on database files.
public enum FileScan {
    /// True when `marker`'s UTF-8 bytes occur anywhere in the file (false for a missing file).
    public static func file(_ path: String, contains marker: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return data.range(of: Data(marker.utf8)) != nil
    }

    /// The size of a file, 0 when it is missing.
    public static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
