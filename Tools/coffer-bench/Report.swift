import Foundation

/// Formats measurements as a table with coffer/raw-c ratios, or as JSON lines.
enum Report {
    static func printJSON(_ measurement: Measurement) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let data = try? encoder.encode(measurement) { print(String(decoding: data, as: UTF8.self)) }
    }

    static func table(_ results: [Measurement]) -> String {
        var workloads: [String] = []
        for result in results where !workloads.contains(result.workload) { workloads.append(result.workload) }
        var lines = [
            "workload              raw-c ops/s     coffer ops/s  raw-c-plain ops/s  coffer-plain ops/s   coffer/raw-c"
                + "  plain/raw-plain  coffer/plain   peak RSS MiB: raw-c  coffer  coffer-plain"
        ]
        for workload in workloads {
            func ops(_ impl: Implementation) -> Double? {
                results.first { $0.workload == workload && $0.impl == impl.rawValue }?.opsPerSecond
            }
            func peakMiB(_ impl: Implementation) -> Double? {
                results.first { $0.workload == workload && $0.impl == impl.rawValue }?.peakRSSKiB.map { Double($0) / 1024 }
            }
            let raw = ops(.rawC)
            let coffer = ops(.coffer)
            let rawPlain = ops(.rawCPlain)
            let plain = ops(.cofferPlain)
            // A ratio of costs (time per op): above 1 means Coffer is slower.
            let ratio = raw.flatMap { raw in coffer.map { raw / $0 } }
            let plainRatio = rawPlain.flatMap { raw in plain.map { raw / $0 } }
            let encryption = plain.flatMap { plain in coffer.map { plain / $0 } }
            lines.append(
                workload.padding(toLength: 20, withPad: " ", startingAt: 0)
                    + format(raw, width: 14) + format(coffer, width: 17) + format(rawPlain, width: 19)
                    + format(plain, width: 20) + format(ratio, width: 15, decimals: 2)
                    + format(plainRatio, width: 17, decimals: 2) + format(encryption, width: 14, decimals: 2)
                    + format(peakMiB(.rawC), width: 22, decimals: 1) + format(peakMiB(.coffer), width: 8, decimals: 1)
                    + format(peakMiB(.cofferPlain), width: 14, decimals: 1))
        }
        // W6: what share of their solo throughput the readers keep while the writer runs.
        for impl in Implementation.allCases {
            let with = results.first { $0.workload == "W6-readers" && $0.impl == impl.rawValue }
            let alone = results.first { $0.workload == "W6-readers-alone" && $0.impl == impl.rawValue }
            if let with, let alone {
                lines.append(
                    "W6 \(impl.rawValue): readers keep \(String(format: "%.0f", 100 * with.opsPerSecond / alone.opsPerSecond))% of their throughput while the writer runs"
                )
            }
        }
        lines += compressionSummary(results)
        return lines.joined(separator: "\n")
    }

    /// W12: the dictionary file against the uncompressed and plain-zstd files, and the dictionary column's
    /// insert and fetch times against the uncompressed column's (above 1: slower).
    private static func compressionSummary(_ results: [Measurement]) -> [String] {
        func seconds(_ workload: String, _ impl: String) -> Double? {
            results.first { $0.workload == workload && $0.impl == impl }?.seconds
        }
        var lines: [String] = []
        if let plain = seconds("W12-size-plain", "coffer"), let zstd = seconds("W12-size-zstd", "coffer"),
            let dictionary = seconds("W12-size-dict", "coffer")
        {
            lines.append(
                String(
                    format: "W12 file: dictionary %.2f MiB = %.2f of uncompressed (%.2f MiB), %.2f of plain zstd (%.2f MiB)",
                    dictionary, dictionary / plain, plain, dictionary / zstd, zstd))
        }
        for workload in ["W12-insert", "W12-fetch"] {
            if let compressed = seconds(workload, "coffer"), let plain = seconds(workload, "coffer-uncompressed") {
                lines.append(
                    String(format: "\(workload): dictionary column %.2f× the uncompressed column's time", compressed / plain))
            }
        }
        return lines
    }

    private static func format(_ value: Double?, width: Int, decimals: Int = 0) -> String {
        let text = value.map { String(format: "%.\(decimals)f", $0) } ?? "—"
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
