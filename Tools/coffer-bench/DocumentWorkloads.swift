import Coffer
import Foundation

/// W11: schemaless documents (`DocumentStore`), Coffer encrypted only. `count` documents of 20
/// attributes each (nested objects and arrays included):
///
/// - `W11-put`: all of them in one batch, every attribute path indexed; `W11-put-unindexed`: the same
///   documents put in one batch into a `KeyValueStore` with no index (the target is ≤ 1.5× of it).
/// - `W11-search-undeclared`: `searches` lookups of a unique email through the attribute index (never
///   declared); `W11-search-declared`: the same lookups on a `KeyValueStore` whose email is a declared
///   `KeyValueIndexField` (the target is ≤ 2× of it).
/// - `W11-begins-with`: `searches` prefix searches on the name (about 11 hits each); `W11-or`: `searches`
///   searches for an email OR a city (about 1 + 100 hits); `W11-aggregate`: `aggregates` averages of
///   the age over the active documents (half of them).
///
/// It also prints, on standard error, the document store's file size (documents and attribute index)
/// against the unindexed key-value store's, with the attribute row count (SQLCipher 3.4.1 has no `dbstat`).
struct DocumentWorkloads {
    let harness: Harness
    let count: Int
    let searches: Int
    let aggregates: Int

    static func document(_ index: Int) -> Document {
        [
            "name": .string("person \(index)"), "email": .string("user-\(index)@example.com"), "age": .int(Int64(index % 90)),
            "score": .double(Double(index % 1000) / 8), "active": .bool(index.isMultiple(of: 2)),
            "joined": .date(Date(timeIntervalSince1970: 1_600_000_000 + Double(index))),
            "address": [
                "city": .string("city-\(index % 1000)"), "zip": .string(String(10_000 + index % 90_000)),
                "geo": ["lat": .double(Double(index % 180) - 90), "lon": .double(Double(index % 360) - 180)],
            ],
            "tags": [.string("t\(index % 7)"), .string("t\(index % 11)"), .string("t\(index % 13)")],
            "phones": [["kind": "home", "number": .string("555-\(index)")]],
        ]
    }

    func run(_ impl: Implementation) throws -> [Measurement] {
        guard impl == .coffer else { return [] }
        let keys = (0..<count).map { "doc-\($0)" }
        let documents = (0..<count).map(Self.document)
        var times: [String: [Double]] = [:]
        let email = KeyValueIndexField<DocumentValue, String>("email") { $0["email"]?.stringValue }
        for _ in 0..<harness.repetitions {
            let documentPath = harness.freshPath("w11-doc")
            let database = try Database(path: documentPath, configuration: harness.configuration(impl))
            defer { try? database.close() }
            let store = try DocumentStore(database: database, name: "people")
            times["W11-put", default: []].append(
                try time {
                    try store.batch { batch in for (key, document) in zip(keys, documents) { try batch.put(document, for: key) } }
                })

            let plainPath = harness.freshPath("w11-kv")
            let plainDatabase = try Database(path: plainPath, configuration: harness.configuration(impl))
            defer { try? plainDatabase.close() }
            let plain = try KeyValueStore(database: plainDatabase, name: "people")
            times["W11-put-unindexed", default: []].append(
                try time {
                    try plain.batch { batch in
                        for (key, document) in zip(keys, documents) { try batch.put(DocumentValue.object(document), for: key) }
                    }
                })
            let declaredDatabase = try Database(
                path: harness.freshPath("w11-declared"), configuration: harness.configuration(impl))
            defer { try? declaredDatabase.close() }
            let declared = try KeyValueStore(
                database: declaredDatabase, name: "declared", configuration: .init(indexes: [email]))
            try declared.batch { batch in
                for (key, document) in zip(keys, documents) { try batch.put(DocumentValue.object(document), for: key) }
            }

            let targets = (0..<searches).map { ($0 * 7919) % count }
            times["W11-search-undeclared", default: []].append(
                try time {
                    for target in targets {
                        let query = DocumentQuery(DocumentField("email") == .string("user-\(target)@example.com"))
                        guard try store.keys(matching: query) == ["doc-\(target)"] else { throw BenchError("W11: wrong hit") }
                    }
                })
            times["W11-search-declared", default: []].append(
                try time {
                    for target in targets {
                        let query = KeyValueQuery(bucket: KeyValueStore.defaultBucket).filter(
                            email == "user-\(target)@example.com")
                        guard try declared.keys(matching: query) == ["doc-\(target)"] else { throw BenchError("W11: wrong hit") }
                    }
                })
            times["W11-begins-with", default: []].append(
                try time {
                    for target in targets {
                        let prefix = "person \(target % 1000 + 1000)"
                        guard !(try store.keys(matching: DocumentQuery(DocumentField("name").beginsWith(prefix)))).isEmpty
                        else { throw BenchError("W11: no prefix hit") }
                    }
                })
            times["W11-or", default: []].append(
                try time {
                    for target in targets {
                        let predicate =
                            DocumentField("email") == .string("user-\(target)@example.com")
                            || DocumentField("address.city") == .string("city-\((target + 1) % 1000)")
                        guard try store.count(matching: DocumentQuery(predicate)) > 1 else { throw BenchError("W11: OR") }
                    }
                })
            times["W11-aggregate", default: []].append(
                try time {
                    for _ in 0..<aggregates {
                        let active = DocumentQuery(DocumentField("active") == true)
                        guard try store.aggregate(.average, of: "age", matching: active) != nil else {
                            throw BenchError("W11: avg")
                        }
                    }
                })
            try reportSizes(documentPath: documentPath, database: database, plainPath: plainPath)
        }
        let operations = [
            "W11-put": count, "W11-put-unindexed": count, "W11-search-undeclared": searches, "W11-search-declared": searches,
            "W11-begins-with": searches, "W11-or": searches, "W11-aggregate": aggregates,
        ]
        return operations.keys.sorted().compactMap { name in
            guard let samples = times[name], !samples.isEmpty, let operationCount = operations[name] else { return nil }
            let seconds = median(samples)
            return Measurement(
                workload: name, impl: impl.rawValue, opsPerSecond: Double(operationCount) / seconds, seconds: seconds)
        }
    }

    private func reportSizes(documentPath: String, database: Database, plainPath: String) throws {
        let counts = try database.read { db in
            (
                try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \"doc-attr:people\"") ?? 0,
                try db.fetchValue(Int.self, sql: "SELECT sum(length(body)) FROM \"doc:people\"") ?? 0
            )
        }
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let fileSize = { (path: String) in ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int ?? 0) >> 10 }
        let line =
            "W11 sizes: document store file \(fileSize(documentPath)) KiB (\(counts.0) attribute rows, bodies \(counts.1 >> 10) KiB);"
            + " unindexed key-value store file \(fileSize(plainPath)) KiB\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    private func time(_ body: () throws -> Void) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
