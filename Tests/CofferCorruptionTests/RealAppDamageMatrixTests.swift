// The damage matrix over the realistic app corpus (Tools/corpus/make_app_databases.py): each app × every
// damage kind (the injector's main-file kinds and the WAL kinds) × 1024/4096-byte pages × with and without a
// -wal × plaintext / SQLCipher 3 / SQLCipher 4, scored against the generator's ground truth (AppDamageCase).
//
// `swift test` runs a seeded subset: every damage kind once, on a file chosen in rotation, asserting what the
// engine meets today (inputs untouched always; recall floors per kind). The full matrix runs with
//   COFFER_CORPUS_MATRIX=1 swift test -c release -Xswiftc -enable-testing --filter RealAppDamageMatrixTests/testFullMatrix
// (`COFFER_CORPUS_SEEDS=N` for seeds 1…N, default 1; `COFFER_CORPUS_KINDS=flip-bytes,wal-truncate` for some
// kinds; `COFFER_CORPUS_VERBOSE=1` prints every case below its bound) and prints Repair.md's markdown table
// (also written to the file `COFFER_CORPUS_TABLE` names, when set).

import CofferCorruption
import CofferRepair
import CofferTestSupport
import Foundation
import XCTest

final class RealAppDamageMatrixTests: XCTestCase {
    /// A loaded corpus: its files, pristine placements (loaded on demand) and the apps' histories.
    private final class Corpus {
        let directory: TemporaryDirectory
        let files: [AppCorpusFile]
        let baseline: RepairRun.Baseline
        private var pristine: [String: AppPristine] = [:]
        private var histories: [String: AppHistory] = [:]

        init() throws {
            let directory = try TemporaryDirectory("coffer-app-matrix")
            let files = try AppCorpus.generate(in: directory.path("corpus"), seed: 17)
            let plain = files.first { $0.profile == "plaintext" && !$0.wal }
            let recoverWorks = try plain.map { try RepairRun.recoverWorks(on: $0.path, directory: directory) } ?? false
            self.directory = directory
            self.files = files
            baseline = recoverWorks ? .recover : .dump
        }

        func load(_ file: AppCorpusFile) throws -> AppPristine {
            if let loaded = pristine[file.name] { return loaded }
            let history =
                try histories[file.app]
                ?? {
                    guard let source = files.first(where: { $0.app == file.app && $0.profile == "plaintext" && $0.wal }) else {
                        throw LibraryReader.Failure(description: "no plaintext WAL variant of \(file.app)")
                    }
                    let tables = try AppPristine.load(source, history: AppHistory()).document.tables.keys
                    return try AppHistory.load(source, tables: Set(tables), scratch: directory)
                }()
            histories[file.app] = history
            let loaded = try AppPristine.load(file, history: history)
            pristine[file.name] = loaded
            return loaded
        }
    }

    /// Where the engine is below the targets on the subset today: the floor asserted instead (recall
    /// as a fraction of the bound, stale rows, virtual tables neither in OUTPUT nor reported), and the gap is
    /// printed. Every other subset case is held to the targets: recall ≥ 99% (encrypted) or ≥ 97% and ≥ the
    /// baseline (plaintext), no stale row, no altered or junk row on an encrypted file, queries answering.
    private struct Floor {
        var recall: Double
        var stale = 0
        var virtualTablesLost = 0
    }
    /// None today: every kind meets the targets on the full matrix (CofferRepair's Repair.md, "Recall on the realistic corpus").
    private static let floors: [String: Floor] = [:]

    func testSeededSubsetMeetsTodaysFloors() throws {
        try XCTSkipUnless(AppCorpus.canGenerate, "python3 -m pip install sqlcipher3-binary")
        let corpus = try Corpus()
        XCTAssertEqual(corpus.files.count, 48)
        var matrix = AppDamageMatrix()
        matrix.baselineName = corpus.baseline.rawValue
        for (number, kind) in AppDamageKind.all.enumerated() {
            let candidates = corpus.files.filter { if case .wal = kind { $0.wal } else { true } }
            var attempt = 0
            while attempt < candidates.count {
                let file = candidates[(number * 7 + attempt * 5) % candidates.count]
                let pristine = try corpus.load(file)
                assertPlacementMatchesTruth(pristine)
                let baseline = file.profile == "plaintext" ? corpus.baseline : nil
                guard
                    let result = try AppDamageCase.run(kind, seed: 1, on: pristine, baseline: baseline, in: corpus.directory)
                else {
                    attempt += 1
                    continue
                }
                matrix[kind, file.profile].add(result)
                assertSubsetCase(result, kind: kind, file: file)
                break
            }
        }
        print(matrix.render())
    }

    func testFullMatrix() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["COFFER_CORPUS_MATRIX"] == "1", "set COFFER_CORPUS_MATRIX=1")
        try XCTSkipUnless(AppCorpus.canGenerate, "python3 -m pip install sqlcipher3-binary")
        let environment = ProcessInfo.processInfo.environment
        let seeds = Int(environment["COFFER_CORPUS_SEEDS"] ?? "") ?? 1
        let only = environment["COFFER_CORPUS_KINDS"].map { Set($0.split(separator: ",").map(String.init)) }
        let corpus = try Corpus()
        var matrix = AppDamageMatrix()
        matrix.baselineName = corpus.baseline.rawValue
        for file in corpus.files {
            let pristine = try corpus.load(file)
            for kind in AppDamageKind.all where only?.contains(kind.description) ?? true {
                for seed in 1...max(1, seeds) {
                    let baseline = file.profile == "plaintext" ? corpus.baseline : nil
                    if let result = try AppDamageCase.run(
                        kind, seed: UInt64(seed), on: pristine, baseline: baseline, in: corpus.directory)
                    {
                        matrix[kind, file.profile].add(result)
                        XCTAssertTrue(result.inputsUntouched, "\(file.name) \(kind) \(seed): INPUT or INPUT-wal changed")
                        if environment["COFFER_CORPUS_VERBOSE"] != nil,
                            result.score.recoveredInBound < result.score.bound || !result.score.wrong.isEmpty
                                || !result.virtualTablesUnaccounted.isEmpty
                        {
                            print(
                                "\(file.name) \(kind) \(seed): \(result.score); virtual tables lost "
                                    + "\(result.virtualTablesUnaccounted)")
                        }
                    } else {
                        matrix[kind, file.profile].notApplicable += 1
                    }
                }
            }
        }
        print(matrix.render())
        if let path = environment["COFFER_CORPUS_TABLE"] {
            try matrix.render().write(toFile: path, atomically: true, encoding: .utf8)
        }
    }

    /// The bound is computed from the same rows the ground truth holds: every row of every app table is placed
    /// on pages exactly once, and a WAL file commits the transactions the app's history has.
    private func assertPlacementMatchesTruth(_ pristine: AppPristine) {
        let name = pristine.file.name
        XCTAssertEqual(Set(pristine.truth.rows.keys), Set(pristine.document.tables.keys), name)
        for (table, rows) in pristine.truth.rows {
            let placed = pristine.truth.placed.filter { $0.table == table }.map(\.key)
            XCTAssertEqual(placed.count, Set(placed).count, "\(name) \(table): a row placed twice")
            XCTAssertEqual(Set(placed), Set(rows.keys), "\(name) \(table)")
        }
        if pristine.file.wal {
            XCTAssertEqual(pristine.history.snapshots.count, pristine.commitFrames.count + 1, name)
        }
    }

    private func assertSubsetCase(_ result: AppCaseResult, kind: AppDamageKind, file: AppCorpusFile) {
        let score = result.score
        let context = "\(file.name) \(kind): \(score)"
        XCTAssertTrue(result.inputsUntouched, "\(context): INPUT or INPUT-wal changed")
        XCTAssertEqual(score.alteredFromIntactPages, 0, context)
        XCTAssertEqual(result.queriesExact, result.queriesExpected, "\(context): ground-truth queries")
        let recall = score.bound == 0 ? 1 : Double(score.recoveredInBound) / Double(score.bound)
        let target = file.profile == "plaintext" ? 0.97 : 0.99
        let floor = Self.floors[kind.description] ?? Floor(recall: target)
        XCTAssertGreaterThanOrEqual(recall, floor.recall, context)
        XCTAssertLessThanOrEqual(score.resurrected, floor.stale, "\(context): stale rows")
        XCTAssertLessThanOrEqual(result.virtualTablesUnaccounted.count, floor.virtualTablesLost, "\(context): virtual tables")
        if file.profile != "plaintext" {
            XCTAssertEqual(score.altered + score.junk, 0, "\(context): altered or junk rows")
        }
        if let baseline = result.baselineRecovered {
            XCTAssertGreaterThanOrEqual(score.recoveredInBound, baseline, "\(context): fewer rows than the baseline")
        }
        if recall < target || score.resurrected > 0 || !result.virtualTablesUnaccounted.isEmpty {
            print(
                "gap: \(file.name) \(kind): recall \(AppDamageMatrix.percent(recall)) (target \(target)), "
                    + "\(score.resurrected) stale, virtual tables lost \(result.virtualTablesUnaccounted)")
        }
    }
}
