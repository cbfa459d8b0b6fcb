import CSQLCipher
import Coffer
import Foundation

/// W7: the key-value layer. `W7-put`: `count` small Codable values put in one batch (one transaction);
/// `W7-get`: each read back by key with the decoded-object cache empty (one read call each);
/// `W7-get-cached`: the same gets again, served from the cache.
///
/// Raw C stores the same JSON in `kv(key TEXT PRIMARY KEY, value BLOB)` and decodes it on every get:
/// it has no cache, so it has no `W7-get-cached` figure.
struct KeyValueWorkloads {
    let harness: Harness
    let count: Int

    struct Item: Codable, Sendable, Equatable {
        var id: Int
        var title: String
        var score: Double
        var tags: [String]
    }

    static func item(_ index: Int) -> Item {
        Item(id: index, title: "item \(index)", score: Double(index % 100) / 4, tags: ["a", "b\(index % 7)"])
    }

    func run(_ impl: Implementation) throws -> [Measurement] {
        let keys = (0..<count).map { "key-\($0)" }
        let items = (0..<count).map(Self.item)
        var put: [Double] = []
        var get: [Double] = []
        var cached: [Double] = []
        for _ in 0..<harness.repetitions {
            let path = harness.freshPath("w7")
            switch impl {
            case .rawC, .rawCPlain:
                let connection = try RawConnection(path: path, key: impl.rawKey, cacheKiB: harness.cacheKiB)
                connection.exec("CREATE TABLE kv(key TEXT PRIMARY KEY, value BLOB NOT NULL)")
                put.append(try time { try Self.rawPut(keys: keys, items: items, connection: connection) })
                get.append(try time { try Self.rawGet(keys: keys, items: items, connection: connection) })
            case .coffer, .cofferPlain:
                let database = try Database(path: path, configuration: harness.configuration(impl))
                defer { try? database.close() }
                let store = try KeyValueStore(database: database, name: "bench")
                put.append(
                    try time {
                        try store.batch { batch in
                            for (key, item) in zip(keys, items) { try batch.put(item, for: key) }
                        }
                    })
                store.invalidateCache()
                let check = { () throws -> Void in
                    for (key, item) in zip(keys, items) {
                        guard try store.value(Item.self, for: key) == item else { throw BenchError("W7: wrong value at \(key)") }
                    }
                }
                get.append(try time(check))
                cached.append(try time(check))
            }
        }
        func measurement(_ name: String, _ times: [Double]) -> Measurement? {
            guard !times.isEmpty else { return nil }
            let seconds = median(times)
            return Measurement(workload: name, impl: impl.rawValue, opsPerSecond: Double(count) / seconds, seconds: seconds)
        }
        return [measurement("W7-put", put), measurement("W7-get", get), measurement("W7-get-cached", cached)].compactMap { $0 }
    }

    private func time(_ body: () throws -> Void) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    private static func rawPut(keys: [String], items: [Item], connection: RawConnection) throws {
        let encoder = JSONEncoder()
        let insert = try connection.prepare("INSERT OR REPLACE INTO kv(key, value) VALUES (?, ?)")
        defer { sqlite3_finalize(insert) }
        connection.exec("BEGIN IMMEDIATE")
        for (key, item) in zip(keys, items) {
            let data = try encoder.encode(item)
            // Bound in place (SQLITE_STATIC) while the statement steps, as RawC.swift explains.
            var key = key
            let code = key.withUTF8 { key in
                data.withUnsafeBytes { data in
                    key.withMemoryRebound(to: CChar.self) {
                        _ = sqlite3_bind_text(insert, 1, $0.baseAddress, Int32($0.count), nil)
                    }
                    sqlite3_bind_blob(insert, 2, data.baseAddress, Int32(data.count), nil)
                    return sqlite3_step(insert)
                }
            }
            sqlite3_reset(insert)
            guard code == SQLITE_DONE else { throw connection.failure(code) }
        }
        connection.exec("COMMIT")
    }

    private static func rawGet(keys: [String], items: [Item], connection: RawConnection) throws {
        let decoder = JSONDecoder()
        let select = try connection.prepare("SELECT value FROM kv WHERE key = ?")
        defer { sqlite3_finalize(select) }
        for (key, item) in zip(keys, items) {
            var bound = key
            let data = try bound.withUTF8 { bytes in
                defer { sqlite3_reset(select) }
                bytes.withMemoryRebound(to: CChar.self) {
                    _ = sqlite3_bind_text(select, 1, $0.baseAddress, Int32($0.count), nil)
                }
                try connection.step(select, expecting: SQLITE_ROW)
                guard let blob = sqlite3_column_blob(select, 0) else { throw BenchError("W7: no value at \(key)") }
                return Data(bytes: blob, count: Int(sqlite3_column_bytes(select, 0)))
            }
            guard try decoder.decode(Item.self, from: data) == item else { throw BenchError("W7: wrong value at \(key)") }
        }
    }
}
