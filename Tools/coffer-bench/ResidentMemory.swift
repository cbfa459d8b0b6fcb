import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The process's resident memory, from `/proc/self/status` (Linux), and a per-workload peak: before each
/// workload, freed heap is returned to the system (`malloc_trim`) and the kernel's high-water mark is
/// reset (writing "5" to `/proc/self/clear_refs`), so `VmHWM` afterwards is that workload's peak.
enum ResidentMemory {
    /// `VmRSS` and `VmHWM` in KiB; nil where `/proc` is missing.
    static func current() -> (rssKiB: Int, peakKiB: Int)? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
            // "VmRSS:\t   13720 kB"
            return line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) }
        }
        guard let rss = field("VmRSS"), let peak = field("VmHWM") else { return nil }
        return (rss, peak)
    }

    /// Returns free heap to the system and restarts the high-water mark at the current RSS; returns
    /// the RSS in KiB (nil where unsupported, or when the kernel ignores the reset).
    static func resetPeak() -> Int? {
        trimHeap()
        guard FileManager.default.isWritableFile(atPath: "/proc/self/clear_refs"),
            let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs")
        else { return nil }
        handle.write(Data("5".utf8))
        try? handle.close()
        guard let now = current(), now.peakKiB <= now.rssKiB + 256 else { return nil }
        return now.rssKiB
    }

    /// glibc's `malloc_trim(0)`, looked up at run time (Swift's Glibc module does not declare it).
    private static func trimHeap() {
        #if canImport(Glibc)
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        #endif
    }

    /// Runs `body` and returns its result with the peak RSS it added over the RSS before it, in KiB.
    static func peakIncrease<T>(_ body: () throws -> T) rethrows -> (result: T, peakKiB: Int?) {
        let before = resetPeak()
        let result = try body()
        guard let before, let after = current() else { return (result, nil) }
        return (result, max(0, after.peakKiB - before))
    }
}
