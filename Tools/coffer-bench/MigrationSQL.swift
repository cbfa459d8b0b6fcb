// W15's SQL and checksum, one file for both benchmarks: Tools/grdb-bench/Sources/grdb-bench/MigrationSQL.swift
// is a symbolic link to this file (the two packages cannot share a module: both export `sqlite3_*`), so
// every side of W15 runs exactly these statements. Only the standard library and each tool's BenchError.

/// W15's SQL: SQLite 3.15's, which Coffer's side runs.
enum MigrationSQL {
    static let schema =
        "CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, age INTEGER NOT NULL)"

    /// Rows 1...`rows`, BenchRow's names, emails and ages, in one statement (the untimed fill).
    static func fill(rows: Int) -> String {
        """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
        INSERT INTO person(id, name, email, age)
        SELECT i, printf('name-%011d', i), printf('user%09d@example.com', i), 18 + i % 60 FROM n
        """
    }

    /// The two migrations, in order: a column added and filled, and its index.
    static let v2 = [
        "ALTER TABLE person ADD COLUMN score INTEGER NOT NULL DEFAULT 0",
        "UPDATE person SET score = age * 2",
        "CREATE INDEX person_on_score ON person(score)",
    ]
    /// The table rebuilt without `age` (SQLite's procedure for what ALTER TABLE cannot do).
    static let v3 = [
        "CREATE TABLE person_new(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, score INTEGER NOT NULL)",
        "INSERT INTO person_new SELECT id, name, email, score FROM person",
        "DROP TABLE person",
        "ALTER TABLE person_new RENAME TO person",
        "CREATE INDEX person_on_score ON person(score)",
    ]
    static let migrations = [("v2", v2), ("v3", v3)]

    static let sums = "SELECT count(*), sum(score), sum(length(name)) FROM person"
    static let columns = "PRAGMA table_info(person)"
    static let indexes = "PRAGMA index_list(person)"

    /// The checksum both sides compute after the run; throws unless the table has the migrated shape.
    static func checksum(count: Int64, score: Int64, nameBytes: Int64, columns: [String], indexes: [String]) throws -> Int64 {
        guard columns == ["id", "name", "email", "score"], indexes.contains("person_on_score") else {
            throw BenchError("W15: person has columns \(columns) and indexes \(indexes) after migrating")
        }
        return count &* 1_000_003 &+ score &* 31 &+ nameBytes
    }
}
