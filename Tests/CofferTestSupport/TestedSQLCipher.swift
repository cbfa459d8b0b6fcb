import Foundation

/// Which SQLCipher the test process runs on: Debian's 3.4.1 (the default build) or SQLCipher 4
/// (`COFFER_SQLCIPHER_PKGCONFIG=sqlcipher4`, Tools/test-sqlcipher4.sh). A test that holds for one library
/// only skips on the other, saying why:
///
/// ```swift
/// try XCTSkipIf(TestedSQLCipher.isVersion4, TestedSQLCipher.only3("the caching crypto provider"))
/// ```
///
/// Read from the loaded library itself (`sqlite3_libversion_number`, looked up in the process), so this
/// module needs no SQLCipher header.
public enum TestedSQLCipher {
    /// The linked SQLite's version number (3015002 for SQLCipher 3.4.1, 3049002 for SQLCipher 4.9.0); 0
    /// when no SQLCipher is loaded.
    public static var sqliteVersionNumber: Int {
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "sqlite3_libversion_number") else {
            return 0
        }
        typealias Function = @convention(c) () -> Int32
        return Int(unsafeBitCast(symbol, to: Function.self)())
    }

    /// Whether the process runs on SQLCipher 4 or later (SQLite 3.26 and later).
    public static var isVersion4: Bool { sqliteVersionNumber >= 3_026_000 }

    /// The skip reason of a test that holds on SQLCipher 3.4.1 only, because of `what`.
    public static func only3(_ what: String) -> String { "SQLCipher 3.4.1 only: \(what)" }

    /// The skip reason of a test that holds on SQLCipher 4 only, because of `what`.
    public static func only4(_ what: String) -> String { "SQLCipher 4 only: \(what)" }
}
