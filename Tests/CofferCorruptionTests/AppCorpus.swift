// AppCorpus — the realistic app databases of Tools/corpus/make_app_databases.py as scoring inputs, joined to
// the corpus machinery (CorpusTruth, RowPlacement, LibraryReader):
// - rows: the generator's ground truth JSON (what SQLCipher 4.12 read from the file and its -wal);
// - pages: RowPlacement over the pristine file, overlaid with its -wal (WALOverlay) when it has one, plus
//   the WAL frame that holds each page's newest committed version;
// - history: every committed state the app went through. Every variant of an app holds the same data, so
//   its plaintext WAL variant gives them all: the main file alone (phase one, checkpointed) and the main file
//   with the WAL cut after each commit frame, each checkpointed by the system sqlite3 into a scratch copy.
//   An output row equal to one of those versions but not to the pristine row is stale (or resurrected).

import CofferCorruption
import CofferRepair
import CofferTestSupport
import Foundation

/// One file of the generator's manifest.
struct AppCorpusFile: Decodable {
    var name: String
    var path: String
    var walPath: String?
    var truth: String
    var app: String
    var profile: String
    var pageSize: Int
    var wal: Bool
}

/// What the matrix reads from the generator's truth JSON beyond its fields.
extension GeneratorTruth {
    /// The value a generator value stands for.
    static func value(_ value: GeneratorValue) -> SalvagedValue {
        switch value {
        case .null: return .null
        case .integer(let number): return .integer(number)
        case .real(let number): return .real(number)
        case .text(let text): return .text(Array(text.utf8))
        case .blob(let bytes): return .blob(bytes)
        }
    }

    /// Whether `table` is a virtual table or one of its shadow tables (scored through the queries instead).
    func isVirtualOrShadow(_ table: String) -> Bool {
        virtualTables.keys.contains { table == $0 || table.hasPrefix($0 + "_") }
    }
}

/// Every version of every row an app's files went through (see the file comment), and each committed state.
struct AppHistory {
    /// One committed state: the main file alone (number 0), then after each commit of the WAL.
    struct Snapshot {
        var tables: [TableDescription] = []
        var placed: [PlacedRow] = []
        var rows: [String: [[SalvagedValue]: [SalvagedValue]]] = [:]
    }
    var rows: [String: Set<[SalvagedValue]>] = [:]
    var raw: Set<[SalvagedValue]> = []
    var snapshots: [Snapshot] = []

    /// Reads the history from `file`, the plaintext WAL variant of the app.
    static func load(_ file: AppCorpusFile, tables: Set<String>, scratch: TemporaryDirectory) throws -> AppHistory {
        guard let walPath = file.walPath else { throw LibraryReader.Failure(description: "\(file.name) has no -wal") }
        let frames = try WALCorruptionInjector.frames(wal: walPath, pageSize: file.pageSize)
        let wal = try Data(contentsOf: URL(fileURLWithPath: walPath))
        var history = AppHistory()
        let cuts = [0] + frames.filter(\.isCommit).map { $0.index + 1 }
        for (number, frameCount) in cuts.enumerated() {
            let path = scratch.path("history-\(file.app)-\(number).db")
            try FileManager.default.copyItem(atPath: file.path, toPath: path)
            if frameCount > 0 {
                try wal.prefix(32 + frameCount * (24 + file.pageSize)).write(to: URL(fileURLWithPath: path + "-wal"))
            }
            let checkpoint = try Shell.run("/usr/bin/sqlite3", ["-batch", path, "PRAGMA journal_mode=DELETE;"])
            guard checkpoint.status == 0 else { throw LibraryReader.Failure(description: checkpoint.stderr) }
            var snapshot = Snapshot()
            (snapshot.tables, snapshot.placed) = RowPlacement.rows(
                in: try DatabaseFile(path: path, key: .none, settings: .plaintext))
            history.raw.formUnion(snapshot.placed.map { CorpusTruth.trimmed($0.rawSignature) })
            for table in snapshot.tables where tables.contains(table.name) {
                let rows = try LibraryReader.rows(path, key: .none, pageSize: file.pageSize, sql: CorpusTruth.selectAll(table))
                history.rows[table.name, default: []].formUnion(rows)
                snapshot.rows[table.name] = Dictionary(
                    rows.map { (CorpusTruth.key($0, table: table), $0) }, uniquingKeysWith: { first, _ in first })
            }
            history.snapshots.append(snapshot)
        }
        return history
    }

    /// The ground truth of committed state `number`: what a WAL cut after that many commits still holds.
    func truth(ofSnapshot number: Int) -> CorpusTruth? {
        guard snapshots.indices.contains(number) else { return nil }
        let snapshot = snapshots[number]
        return CorpusTruth(
            tables: snapshot.tables, placed: snapshot.placed, rows: snapshot.rows, history: rows,
            rawPristine: Dictionary(
                snapshot.placed.map { (CorpusTruth.trimmed($0.rawSignature), RowID(table: $0.table, key: $0.key)) },
                uniquingKeysWith: { first, _ in first }),
            rawHistory: raw)
    }
}

/// A pristine generator file, opened and placed.
struct AppPristine {
    let file: AppCorpusFile
    let document: GeneratorTruth
    let settings: CipherSettings
    let truth: CorpusTruth
    /// Page → the index of the WAL frame holding its newest committed version (pages the WAL has).
    let newestFrame: [UInt32: Int]
    /// Indexes of the committed WAL frames of page 1 (each carries the salt of an encrypted file).
    let pageOneFrames: [Int]
    /// Indexes of the WAL's commit frames, in log order.
    let commitFrames: [Int]
    /// The app's history (its committed states are the same in every variant).
    let history: AppHistory
    /// The pages of sqlite_master's tree and overflow chains (a lost one loses table names).
    let schemaPages: Set<UInt32>

    var passphrase: String? { document.passphrase }
    /// The rows of the app's own tables (virtual tables' shadow rows are checked through queries).
    var appRows: [PlacedRow] { truth.placed.filter { document.tables[$0.table] != nil } }

    static func load(_ file: AppCorpusFile, history: AppHistory) throws -> AppPristine {
        let document = try GeneratorTruth.load(file.truth)
        let main =
            try document.passphrase.map { try ProfileDetection.open(path: file.path, key: .passphrase($0)) }
            ?? DatabaseFile(path: file.path, key: .none, settings: .plaintext)
        let overlay = file.walPath.flatMap { WALOverlay(file: main, walPath: $0) }
        let (tables, placed) = RowPlacement.rows(in: overlay ?? main)
        var schemaPages = Set<UInt32>()
        _ = Schema.read(from: overlay ?? main, visited: &schemaPages)
        let frameSize = UInt64(24 + file.pageSize)
        let newest = (overlay?.index.frames ?? [:]).compactMapValues { $0.first.map { Int(($0 - 56) / frameSize) } }
        let pageOne = (overlay?.index.frames[1] ?? []).map { Int(($0 - 56) / frameSize) }
        var rows: [String: [[SalvagedValue]: [SalvagedValue]]] = [:]
        for table in tables {
            guard let expected = document.tables[table.name] else { continue }
            let libraryRows = expected.rows.map { row in
                Array(row.map(GeneratorTruth.value).dropFirst(table.withoutRowid ? 1 : 0))
            }
            rows[table.name] = Dictionary(
                libraryRows.map { (CorpusTruth.key($0, table: table), $0) }, uniquingKeysWith: { first, _ in first })
        }
        var truth = CorpusTruth(
            tables: tables, placed: placed, rows: rows, history: history.rows,
            rawPristine: Dictionary(
                placed.map { (CorpusTruth.trimmed($0.rawSignature), RowID(table: $0.table, key: $0.key)) },
                uniquingKeysWith: { first, _ in first }),
            rawHistory: history.raw)
        truth.rawInternal = Set(document.sequences.map { [.text(Array($0.key.utf8)), .integer($0.value)] })
        let commits = try file.walPath.map { try WALCorruptionInjector.frames(wal: $0, pageSize: file.pageSize) } ?? []
        return AppPristine(
            file: file, document: document, settings: main.settings, truth: truth, newestFrame: newest,
            pageOneFrames: pageOne, commitFrames: commits.filter(\.isCommit).map(\.index), history: history,
            schemaPages: schemaPages)
    }
}

/// The generator, run as a process.
enum AppCorpus {
    private struct Manifest: Decodable {
        var files: [AppCorpusFile]
    }

    static var generator: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tools/corpus/make_app_databases.py").path
    }

    /// Whether python's sqlcipher3 (SQLCipher 4.12), which the generator needs, is installed.
    static var canGenerate: Bool { (try? Shell.run("/usr/bin/env", ["python3", "-c", "import sqlcipher3"]).status) == 0 }

    /// Generates every app × profile × page size × WAL choice into `directory` with `seed`.
    static func generate(in directory: String, seed: Int, scale: Int = 1) throws -> [AppCorpusFile] {
        let made = try Shell.run(
            "/usr/bin/env", ["python3", generator, directory, "--seed", "\(seed)", "--scale", "\(scale)"])
        guard made.status == 0 else { throw LibraryReader.Failure(description: "generator: \(made.stderr)") }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let manifest = try Data(contentsOf: URL(fileURLWithPath: directory + "/manifest.json"))
        return try decoder.decode(Manifest.self, from: manifest).files
    }
}
