import Coffer
import Foundation

/// The chat table of W12 uncompressed…
@Table("chat")
struct W12Plain: Codable {
    @Column(primaryKey: true) var id: Int64?
    var conversation: Int64
    var content: String
}

/// …with its content compressed by plain zstd…
@Table("chat")
struct W12Zstd: Codable {
    @Column(primaryKey: true) var id: Int64?
    var conversation: Int64
    @Column(compressed: .zstd) var content: String
}

/// …and with a dictionary trained on the first messages.
@Table("chat")
struct W12Dictionary: Codable {
    @Column(primaryKey: true) var id: Int64?
    var conversation: Int64
    @Column(compressed: .dictionary(1)) var content: String
}

/// W12 (compressed columns), Coffer encrypted: `count` chat messages of ``ChatGenerator`` (Chinese runs,
/// English words, emoji; 5–200 characters, about 10–500 bytes) inserted in write transactions of 500.
///
/// - `W12-size-plain`, `W12-size-zstd`, `W12-size-dict`: the database's size (`page_count` ×
///   `page_size`, what the file holds once checkpointed), as rows per MiB of file (`ops_per_s`; larger is better; `seconds` holds the MiB), for `coffer`.
/// - `W12-insert`, `W12-fetch`: inserting them all, and `fetchAll` of them all, for `coffer` (the
///   dictionary column) and `coffer-uncompressed`.
///
/// The dictionary (32 KiB) is trained on the first 5,000 messages before the timed insert; its training
/// time goes to standard error.
struct CompressionWorkloads {
    let harness: Harness
    let count: Int

    func run(_ impl: Implementation) throws -> [Measurement] {
        guard impl == .coffer else { return [] }
        var generator = ChatGenerator(seed: 12)
        let messages = (0..<count).map { _ in generator.message() }
        let samples = messages.prefix(5_000).map(\.body)
        var sizes: [String: [Double]] = [:]
        var times: [String: [Double]] = [:]
        for _ in 0..<harness.repetitions {
            let plain = try measure(W12Plain.self, messages, dictionary: nil) {
                W12Plain(id: nil, conversation: $0.conversation, content: $0.body)
            }
            let zstd = try measure(W12Zstd.self, messages, dictionary: nil) {
                W12Zstd(id: nil, conversation: $0.conversation, content: $0.body)
            }
            let dictionary = try measure(W12Dictionary.self, messages, dictionary: Array(samples)) {
                W12Dictionary(id: nil, conversation: $0.conversation, content: $0.body)
            }
            sizes["W12-size-plain", default: []].append(plain.mebibytes)
            sizes["W12-size-zstd", default: []].append(zstd.mebibytes)
            sizes["W12-size-dict", default: []].append(dictionary.mebibytes)
            times["W12-insert coffer", default: []].append(dictionary.insert)
            times["W12-fetch coffer", default: []].append(dictionary.fetch)
            times["W12-insert coffer-uncompressed", default: []].append(plain.insert)
            times["W12-fetch coffer-uncompressed", default: []].append(plain.fetch)
        }
        var results = ["W12-size-plain", "W12-size-zstd", "W12-size-dict"].compactMap { name -> Measurement? in
            guard let samples = sizes[name], !samples.isEmpty else { return nil }
            let mebibytes = median(samples)
            return Measurement(workload: name, impl: impl.rawValue, opsPerSecond: Double(count) / mebibytes, seconds: mebibytes)
        }
        for key in times.keys.sorted() {
            guard let samples = times[key], !samples.isEmpty else { continue }
            let parts = key.split(separator: " ").map(String.init)
            let seconds = median(samples)
            results.append(
                Measurement(workload: parts[0], impl: parts[1], opsPerSecond: Double(count) / seconds, seconds: seconds))
        }
        return results
    }

    private struct Figures {
        var mebibytes: Double
        var insert: Double
        var fetch: Double
    }

    /// One fresh file of `Table`: the timed insert, the file's size, the timed fetch.
    private func measure<Table: TableRecord>(
        _ type: Table.Type, _ messages: [ChatGenerator.Message], dictionary samples: [String]?,
        _ record: (ChatGenerator.Message) -> Table
    ) throws -> Figures {
        let path = harness.freshPath("w12")
        let database = try Database(path: path, configuration: harness.configuration(.coffer))
        defer { try? database.close() }
        _ = try database.write { db in try db.upgradeSchema(for: [Table.self]) }
        if let samples {
            let training = try time {
                _ = try database.write { db in
                    try db.trainCompressionDictionary(id: 1, from: samples, maximumSize: 32 * 1024)
                }
            }
            FileHandle.standardError.write(
                Data("W12: dictionary trained on \(samples.count) messages in \(String(format: "%.3f", training)) s\n".utf8))
        }
        let records = messages.map(record)
        let insert = try time {
            var start = 0
            while start < records.count {
                let end = min(start + 500, records.count)
                try database.write { db in _ = try Table.insertAll(records[start..<end], db) }
                start = end
            }
        }
        // insertAll compresses on a second thread while the writer inserts (CompressionAhead): how the
        // values were shared.
        let counts = try database.write { db in db.compressionAheadCounts }
        if counts.values > 0 {
            FileHandle.standardError.write(
                Data("W12: \(counts.byHelper) of \(counts.values) values compressed on the second thread\n".utf8))
        }
        // The database's size in pages (WAL included): what the file holds once checkpointed, whether or not
        // a background checkpoint got there yet.
        let bytes = try database.read { db in
            (try db.fetchValue(Int.self, sql: "PRAGMA page_count") ?? 0)
                * (try db.fetchValue(Int.self, sql: "PRAGMA page_size") ?? 0)
        }
        var fetched = 0
        let fetch = try time { fetched = try database.read { try Table.fetchAll($0).count } }
        guard fetched == messages.count else { throw BenchError("W12: fetched \(fetched) of \(messages.count) rows") }
        return Figures(mebibytes: Double(bytes) / 1_048_576, insert: insert, fetch: fetch)
    }

    private func time(_ body: () throws -> Void) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
