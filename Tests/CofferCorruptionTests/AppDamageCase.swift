// AppDamageCase — one damage case on a generator file: inject (main file or -wal, seeded), compute the bound,
// repair as `coffer repair` does, score against the ground truth, and check what the scores cannot see.
//
// The bound: rows of the app's tables all of whose pages still hold their newest committed version intact.
// A page's newest version is its newest committed WAL frame when the WAL has one (lost when that frame is
// flipped, cut off, or its transaction's commit frame is cut off), else the main file's page (lost when the
// injector touched it). On an encrypted file whose salt was damaged, nothing is readable unless a
// surviving committed WAL frame of page 1 still carries the salt. A cut WAL is scored against the state of
// its last surviving commit instead (every row of that state survives; a row from an older state is stale).
// Checked per case besides the score: INPUT and INPUT-wal are byte-identical after the repair; the ground
// truth's MATCH and R*Tree queries answer exactly when no page of any table or of sqlite_master was lost;
// each virtual table is in OUTPUT as a virtual table or named in the report's schema issues (or lost with
// sqlite_master entries the report says are gone: `schema sqlite_master`). On plaintext, `sqlite3 .recover`
// (or `.dump` where this sqlite3 cannot `.recover`) runs on a scratch copy of the same damaged files.

import CofferCorruption
import CofferTestSupport
import Foundation

@testable import CofferRepair

/// A damage kind of the matrix: one of the injector's main-file kinds or a WAL kind.
enum AppDamageKind: Hashable, CustomStringConvertible {
    case main(DamageKind)
    case wal(WALDamageKind)

    static var all: [AppDamageKind] { DamageKind.allCases.map(Self.main) + WALDamageKind.allCases.map(Self.wal) }

    var description: String {
        switch self {
        case .main(let kind): return kind.rawValue
        case .wal(let kind): return kind.rawValue
        }
    }
}

/// What one case measured.
struct AppCaseResult {
    var score = CorpusScore()
    var refused = false
    var inputsUntouched = true
    /// Queries expected to answer exactly (no page of any table lost), and how many did.
    var queriesExpected = 0
    var queriesExact = 0
    /// Virtual tables neither in OUTPUT as virtual tables nor named in the report.
    var virtualTablesUnaccounted: [String] = []
    /// The baseline's rows correct within the bound, and its wrong rows (plaintext only).
    var baselineRecovered: Int?
    var baselineWrong: Int?
}

enum AppDamageCase {
    /// Runs `kind` with `seed` on `pristine` in `directory`; nil when the file has nothing the kind targets.
    static func run(
        _ kind: AppDamageKind, seed: UInt64, on pristine: AppPristine, baseline: RepairRun.Baseline?,
        in directory: TemporaryDirectory
    ) throws -> AppCaseResult? {
        let name = "\(pristine.file.name)-\(kind)-\(seed)"
        let damaged = directory.path("\(name).db")
        guard let (isIntact, walDamage) = try inject(kind, seed: seed, pristine: pristine, output: damaged) else { return nil }
        var truth = pristine.truth
        var bound = pristine.appRows.filter { $0.pages.allSatisfy(isIntact) }
        var queriesApply =
            pristine.truth.placed.allSatisfy { $0.pages.allSatisfy(isIntact) } && pristine.schemaPages.allSatisfy(isIntact)
        var rowIntact = isIntact
        if let walDamage, walDamage.kind == .truncate, let state = survivingState(walDamage, pristine) {
            truth = state
            truth.rawInternal = pristine.truth.rawInternal
            bound = state.placed.filter { pristine.document.tables[$0.table] != nil }
            queriesApply = false
            rowIntact = { _ in true }
        }
        let inputs = [damaged, damaged + "-wal"]
        let before = inputs.map { FileManager.default.contents(atPath: $0) }

        var result = AppCaseResult()
        let output = directory.path("\(name)-repaired.db")
        let passphrase = pristine.passphrase
        switch try RepairRun.repair(
            damaged, output: output, passphrase: passphrase, detectProfile: passphrase != nil, pipeline: true)
        {
        case .refused:
            result.refused = true
            result.score.bound = bound.count
            result.score.missing = bound.map { RowID(table: $0.table, key: $0.key) }
        case .repaired(let report, let outcome):
            result.score = try CorpusScore.score(
                output, key: passphrase, pageSize: 4096, truth: truth, bound: bound, isIntact: rowIntact,
                ignoring: pristine.document.isVirtualOrShadow)
            if queriesApply {
                for query in pristine.document.queries {
                    result.queriesExpected += 1
                    let expected = query.rows.map { $0.map(GeneratorTruth.value) }
                    let actual = try? LibraryReader.rows(output, key: passphrase, pageSize: 4096, sql: query.sql)
                    if actual == expected { result.queriesExact += 1 }
                }
            }
            // Named in the report, or lost with the sqlite_master entries the report says are gone (then
            // nothing in the file names it any more).
            let reported = Set(report.schemaIssues.map(\.name))
            result.virtualTablesUnaccounted = pristine.document.virtualTables.keys.sorted().filter {
                !outcome.virtualTablesCreated.contains($0) && !reported.contains($0) && !reported.contains("sqlite_master")
            }
        }
        result.inputsUntouched = inputs.map { FileManager.default.contents(atPath: $0) } == before
        if let baseline {
            let copy = directory.path("\(name)-baseline-input.db")
            for (source, target) in zip(inputs, [copy, copy + "-wal"]) where FileManager.default.fileExists(atPath: source) {
                try FileManager.default.copyItem(atPath: source, toPath: target)
            }
            let recovered = directory.path("\(name)-baseline.db")
            if try RepairRun.run(baseline, copy, output: recovered) {
                let score = try CorpusScore.score(
                    recovered, key: .none, pageSize: 4096, truth: truth, bound: bound, isIntact: rowIntact,
                    ignoring: pristine.document.isVirtualOrShadow)
                result.baselineRecovered = score.recoveredInBound
                result.baselineWrong = score.junk + score.altered + score.resurrected
            } else {
                result.baselineRecovered = 0
                result.baselineWrong = 0
            }
        }
        return result
    }

    /// After a cut WAL the newest provable state is the one of the last commit frame that survives: the truth
    /// is that state (the app's history has it; every variant commits the same transactions), all of whose
    /// rows survive. Nil if this file's WAL does not commit as the history's does.
    private static func survivingState(_ damage: WALDamageReport, _ pristine: AppPristine) -> CorpusTruth? {
        guard let firstLost = damage.lostFrames.min(),
            pristine.history.snapshots.count == pristine.commitFrames.count + 1
        else { return nil }
        return pristine.history.truth(ofSnapshot: pristine.commitFrames.filter { $0 < firstLost }.count)
    }

    /// Writes the damaged copy (and its -wal) to `output`; returns which pristine pages survived and the WAL
    /// damage, or nil when the file has nothing `kind` targets.
    private static func inject(_ kind: AppDamageKind, seed: UInt64, pristine: AppPristine, output: String) throws
        -> ((UInt32) -> Bool, WALDamageReport?)?
    {
        let file = pristine.file
        let key = pristine.passphrase.map { Encryption.passphrase($0) } ?? .none
        var mainDamage: DamageReport?
        var walDamage: WALDamageReport?
        do {
            switch kind {
            case .main(let kind):
                mainDamage = try CorruptionInjector.inject(
                    input: file.path, output: output, key: key, settings: pristine.settings, kind: kind, seed: seed)
                if let walPath = file.walPath { try FileManager.default.copyItem(atPath: walPath, toPath: output + "-wal") }
            case .wal(let kind):
                guard let walPath = file.walPath else { return nil }
                try FileManager.default.copyItem(atPath: file.path, toPath: output)
                try FileManager.default.copyItem(atPath: walPath, toPath: output + "-wal")
                walDamage = try WALCorruptionInjector.inject(
                    wal: output + "-wal", pageSize: file.pageSize, kind: kind, seed: seed, encrypted: key.isEncrypted)
            }
        } catch CorruptionError.noTarget, CorruptionError.noWALTarget {
            return nil
        }
        let lost = Set(walDamage?.lostFrames ?? [])
        let touched = mainDamage?.touchedPageNumbers ?? []
        let saltGone = (mainDamage?.saltDamaged ?? false) && pristine.pageOneFrames.allSatisfy(lost.contains)
        let newest = pristine.newestFrame
        let isIntact = { (page: UInt32) -> Bool in
            guard !saltGone else { return false }
            if let frame = newest[page] { return !lost.contains(frame) }
            return !touched.contains(page)
        }
        return (isIntact, walDamage)
    }
}
