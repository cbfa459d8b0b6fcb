import CSQLCipher
import Foundation

/// SQLite's `sqlite3_snapshot_get`, `_open` and `_free`, found at run time: they exist only in a library
/// built with `SQLITE_ENABLE_SNAPSHOT` (SQLCipher 4's builds; not Debian's 3.4.1), so Coffer cannot link
/// them by name and still load on 3.4.1.
enum WALSnapshotFunctions {
    typealias Get = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    typealias Open = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?) -> Int32
    typealias Free = @convention(c) (OpaquePointer?) -> Void

    struct Functions: @unchecked Sendable {
        let get: Get
        let open: Open
        let free: Free
    }

    /// The three functions, or nil when the linked library lacks them.
    static let linked: Functions? = {
        guard sqlite3_compileoption_used("ENABLE_SNAPSHOT") != 0,
            let library = dlopen(nil, RTLD_NOW),
            let get = dlsym(library, "sqlite3_snapshot_get"),
            let open = dlsym(library, "sqlite3_snapshot_open"),
            let free = dlsym(library, "sqlite3_snapshot_free")
        else { return nil }
        return Functions(
            get: unsafeBitCast(get, to: Get.self), open: unsafeBitCast(open, to: Open.self),
            free: unsafeBitCast(free, to: Free.self))
    }()
}

/// One WAL state recorded by `sqlite3_snapshot_get` on the connection that reads it, which other readers
/// open with `sqlite3_snapshot_open`. Valid while that connection's read transaction stays open (no
/// checkpoint can then pass it); freed by ``release()``.
final class WALSnapshot: @unchecked Sendable {
    private let functions: WALSnapshotFunctions.Functions
    private let lock = NSLock()
    // Guarded by `lock`: nil once released.
    private var pointer: OpaquePointer?

    /// The state `connection`'s open read transaction reads, or nil when the library has no snapshots or the
    /// database is not in WAL mode.
    init?(of connection: Connection) {
        guard let functions = WALSnapshotFunctions.linked else { return nil }
        var pointer: OpaquePointer?
        guard functions.get(connection.handle, "main", &pointer) == SQLITE_OK, pointer != nil else { return nil }
        self.functions = functions
        self.pointer = pointer
    }

    deinit { release() }

    /// Opens the recorded state in `connection`, which must be inside a transaction that has not read yet.
    func open(in connection: Connection) throws {
        lock.lock()
        defer { lock.unlock() }
        guard let pointer else { throw DatabaseSnapshot.closedError }
        let code = functions.open(connection.handle, "main", pointer)
        guard code == SQLITE_OK else { throw connection.failure(code: code, sql: "sqlite3_snapshot_open") }
    }

    func release() {
        lock.lock()
        defer { lock.unlock() }
        if let pointer { functions.free(pointer) }
        pointer = nil
    }
}
