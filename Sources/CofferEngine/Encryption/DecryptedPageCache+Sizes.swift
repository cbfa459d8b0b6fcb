internal import CofferPageCache
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DecryptedPageCache {
    /// The encrypted databases open through ``Database``: the sizes of their files (main file and WAL)
    /// cap the pages the cache holds at twice their total — about every page on disk once, ciphertext
    /// and plaintext — however many stale versions of rewritten pages it has seen. Measured at open and
    /// close, every 16 WAL frames, at checkpoints and at ``Database/releaseMemory()``.
    final class OpenFiles: @unchecked Sendable {
        static let shared = OpenFiles()
        private let lock = NSLock()
        // Guarded by `lock`: the open databases' paths, by registration.
        private var paths: [UUID: String] = [:]

        /// Counts `path` in until `remove` is called with the returned token.
        func add(_ path: String) -> UUID {
            let token = UUID()
            lock.withLock { paths[token] = path }
            refresh()
            return token
        }

        func remove(_ token: UUID) {
            lock.withLock { _ = paths.removeValue(forKey: token) }
            refresh()
        }

        /// Measures the files again and sets the cap (none beyond the capacity when no database is
        /// open); returns it. Pages held above a lowered cap go as new pages replace them, or on `trim`.
        @discardableResult
        func refresh() -> Int {
            lock.withLock {
                let limit =
                    paths.isEmpty
                    ? Int.max : 2 * paths.values.reduce(0) { $0 + Self.fileSize($1) + Self.fileSize($1 + "-wal") }
                coffer_page_cache_set_limit(limit)
                return limit
            }
        }

        /// Measures the files again and wipes and frees the least recently used pages above the cap.
        func trim() {
            let limit = refresh()
            if DecryptedPageCache.usage.bytes > limit { coffer_page_cache_trim(limit) }
        }

        /// The file's size, 0 when it does not exist: one `stat` call (FileManager's attributes would also
        /// look up the owner's account names, a thousand times the cost, every 16 WAL frames).
        static func fileSize(_ path: String) -> Int {
            var info = stat()
            return stat(path, &info) == 0 ? Int(info.st_size) : 0
        }
    }
}
