import CSQLCipher
/// Version of the linked SQLCipher library.
public enum CofferVersion { public static var sqlite: String { String(cString: sqlite3_libversion()) } }
