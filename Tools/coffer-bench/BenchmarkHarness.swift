import Coffer
import Foundation

/// One measured figure: a workload run by one implementation.
struct Measurement: Encodable {
    let workload: String
    let impl: String
    let opsPerSecond: Double
    let seconds: Double
    /// The peak resident memory the workload added over the process's RSS before it, in KiB (nil where
    /// `/proc` cannot tell); see ``ResidentMemory``.
    var peakRSSKiB: Int? = nil
    /// Median and 99th-percentile latency of one operation, for workloads that time each (W8).
    var p50Seconds: Double? = nil
    var p99Seconds: Double? = nil

    enum CodingKeys: String, CodingKey {
        case workload, impl
        case opsPerSecond = "ops_per_s"
        case seconds
        case peakRSSKiB = "peak_rss_kib"
        case p50Seconds = "p50_s"
        case p99Seconds = "p99_s"
    }
}

/// The implementations every workload runs on, in one process, one after another.
enum Implementation: String, CaseIterable {
    case rawC = "raw-c"
    case rawCPlain = "raw-c-plain"
    case coffer = "coffer"
    case cofferPlain = "coffer-plain"

    var isEncrypted: Bool { self == .rawC || self == .coffer }
    var isRaw: Bool { self == .rawC || self == .rawCPlain }
    /// The key raw C opens its files with: the passphrase, or none for plaintext.
    var rawKey: String? { self == .rawC ? WriteWorkloads.passphrase : nil }
}

/// The median of `samples` (the upper one of an even count); `samples` must not be empty.
func median(_ samples: [Double]) -> Double { samples.sorted()[samples.count / 2] }

/// Runs a body several times on fresh state and keeps the median wall time.
struct Harness {
    let repetitions: Int
    let directory: URL
    /// The page cache of every connection, in KiB: Coffer's `cacheSizeKiB`, and `PRAGMA cache_size` on the
    /// raw C connections, so that ratios measure the layer and not a cache-size difference.
    let cacheKiB: Int
    /// Coffer's key derivation for new files (`--key-derivation`; default Coffer's).
    var keyDerivation: KeyDerivation = .coffer
    /// Coffer's monitoring (`--monitoring`; default all off).
    var monitoring = Monitoring()
    /// Raw C writers' `PRAGMA wal_autocheckpoint` in W1, W2 and W6 (`--raw-wal-autocheckpoint`; default 0, never).
    var rawAutoCheckpointPages = 0

    /// Coffer's configuration for `impl`: the README's (a passphrase, or none), with the bench cache size.
    /// Raw C's files, which Coffer fills and raw C opens with the passphrase, get SQLCipher 3's derivation.
    func configuration(_ impl: Implementation) -> Configuration {
        var configuration = Configuration(encryption: impl.isEncrypted ? .passphrase(WriteWorkloads.passphrase) : .none)
        configuration.cipher.keyDerivation = impl == .rawC ? .sqlcipher3 : keyDerivation
        configuration.cacheSizeKiB = cacheKiB
        configuration.monitoring = monitoring
        return configuration
    }

    /// A fresh database path for one run.
    func freshPath(_ name: String) -> String {
        let path = directory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8)).db").path
        return path
    }

    /// Median seconds of `repetitions` runs of `body`; `setUp` runs untimed before each.
    func median<State>(setUp: () throws -> State, _ body: (State) throws -> Void, tearDown: (State) throws -> Void = { _ in })
        rethrows -> Double
    {
        var times: [Double] = []
        for _ in 0..<repetitions {
            let state = try setUp()
            let start = DispatchTime.now().uptimeNanoseconds
            try Self.timed(body, state)
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            try tearDown(state)
        }
        return coffer_bench.median(times)  // the free function: this type's own `median` is the generic runner
    }

    /// The timed part of a run, kept out of line so that callgrind can count it alone:
    /// `valgrind --tool=callgrind --toggle-collect='*Harness*timed*Tm' coffer-bench …` on a `strip -g` copy of
    /// the release build (LLVM merges the specializations into one `…Tm` function their thunks call; a
    /// pattern matching the thunks too toggles collection off again on entering it).
    @inline(never)
    static func timed<State>(_ body: (State) throws -> Void, _ state: State) rethrows {
        try body(state)
    }
}

/// Deterministic rows for the benchmark's table:
/// `id INTEGER PRIMARY KEY, name TEXT, age INTEGER, email TEXT, score REAL, payload BLOB`.
struct BenchRow {
    let id: Int64
    let name: String
    let age: Int64
    let email: String
    let score: Double
    let payload: Data

    static let schema = """
        CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT, age INTEGER, email TEXT, score REAL, payload BLOB);
        CREATE INDEX person_age ON person(age);
        """
    static let insertSQL = "INSERT INTO person(id, name, age, email, score, payload) VALUES (?, ?, ?, ?, ?, ?)"
    static let selectAllSQL = "SELECT id, name, age, email, score, payload FROM person"
    static let selectByIDSQL = "SELECT id, name, age, email, score, payload FROM person WHERE id = ?"
    static let rangeSQL =
        "SELECT id, name, age, email, score, payload FROM person WHERE age BETWEEN ? AND ? ORDER BY score LIMIT 50"

    static func make(_ id: Int64) -> BenchRow {
        let payloadByte = UInt8(truncatingIfNeeded: id)
        return BenchRow(
            id: id,
            name: "name-\(String(format: "%011lld", id))",
            age: 18 + id % 60,
            email: "user\(String(format: "%09lld", id))@example.com",
            score: Double(id % 1000) / 10,
            payload: Data(repeating: payloadByte, count: 100))
    }

    /// Rows 1...count, generated once before any timing so that no workload measures row formatting.
    static func generate(_ count: Int) -> [BenchRow] {
        (1...Int64(max(count, 1))).map(make)
    }
}

/// A benchmark setup failure.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
