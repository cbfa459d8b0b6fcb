import ArgumentParser
import Coffer
import CofferRepair
import Foundation

/// `coffer stats DB`: space per table and index, free pages, and the WAL's size and checkpoint state.
///
/// DB is only read, through Coffer's page decoder (the linked SQLCipher has no `dbstat`): no SQLite
/// connection opens it, so nothing is checkpointed, recovered or created beside it.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show rows, pages, bytes, overflow pages and fragmentation per table and index, and the WAL's state.",
        discussion: """
            Fragmentation: leaves read in key order (a full scan); a step to a leaf that is not the very next \
            page of the file is a gap; fragmentation = gaps ÷ (leaves − 1), 0 sequential to 1 every step seeks. \
            Unused bytes: free space inside the object's pages (gaps, freeblocks, fragments, the empty tail of \
            overflow chains). DB is never written.
            """)

    @Argument(help: "The database file (never modified).")
    var database: String

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @OptionGroup var key: KeyOptions

    @OptionGroup var compat: CipherCompatOptions

    func run() throws {
        guard FileManager.default.fileExists(atPath: database) else {
            throw CLIFailure(status: .failure, message: "no such file: \(database)")
        }
        let file = try compat.openFile(database, key: key)
        let stats = StatisticsCollector.collect(file: file)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(stats), as: UTF8.self))
        } else {
            print(Self.text(for: stats))
        }
    }

    static func text(for stats: DatabaseStatistics) -> String {
        var lines = [
            "file:          \(stats.path) (\(stats.fileSize) bytes)",
            "pages:         \(stats.pageCount) × \(stats.pageSize) bytes (\(stats.reservedBytes) reserved per page)",
            "free pages:    \(stats.freelistPages) on the freelist, \(stats.unclaimedPages) unclaimed",
            "auto_vacuum:   \(stats.autoVacuum)\(stats.pointerMapPages > 0 ? " (\(stats.pointerMapPages) pointer-map pages)" : "")",
        ]
        let wal = stats.wal
        if wal.bytes == 0 {
            lines.append("wal:           none")
        } else {
            var state = "\(wal.bytes) bytes, \(wal.frames) frames, \(wal.committedFrames) committed"
            if let backfilled = wal.backfilledFrames { state += ", \(backfilled) checkpointed" }
            if wal.damagedFrames > 0 { state += ", \(wal.damagedFrames) damaged" }
            lines.append("wal:           \(state) (\(wal.checkpointState))")
        }
        let header = ["name", "kind", "rows", "pages", "bytes", "overflow", "unused", "frag"]
        var rows = [header]
        for object in stats.objects {
            rows.append([
                object.name, object.kind, "\(object.rows)", "\(object.pages)", "\(object.bytes)", "\(object.overflowPages)",
                "\(object.unusedBytes)", String(format: "%.2f", object.fragmentation),
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { column, text in
                column < 2
                    ? text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - text.count) + text
            }
            lines.append("  " + cells.joined(separator: "  "))
        }
        return lines.joined(separator: "\n")
    }
}
