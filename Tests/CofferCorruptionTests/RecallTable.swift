// RecallTable — the per-kind summary the corpus prints: physical bound, rows recovered within it, junk,
// altered, resurrected, and (plaintext) the rows `.recover` got right.

import CofferCorruption

struct RecallTable {
    struct Line {
        var kind: DamageKind
        var cases = 0
        var notApplicable = 0
        var refused = 0
        var bound = 0
        var recovered = 0
        var correct = 0
        var junk = 0
        var altered = 0
        var resurrected = 0
        var recoverCorrect: Int?
        var recoverWrong: Int?

        mutating func add(_ score: CorpusScore) {
            cases += 1
            bound += score.bound
            recovered += score.recoveredInBound
            correct += score.correct
            junk += score.junk
            altered += score.altered
            resurrected += score.resurrected
        }
    }

    let flavor: String
    let totalRows: Int
    var baseline: RepairRun.Baseline?
    var lines: [Line] = []

    func render() -> String {
        var text = "recall table — \(flavor) (\(totalRows) pristine rows per case)"
        text += baseline.map { ", baseline sqlite3 \($0.rawValue)\n" } ?? "\n"
        let name = baseline?.rawValue ?? "base"
        text += pad([
            "kind", "cases", "bound", "recovered", "recall", "correct", "junk", "altered", "resurr.", "\(name) ok", "\(name) bad",
        ])
        for line in lines {
            let recall = line.bound == 0 ? "-" : String(format: "%.2f%%", 100 * Double(line.recovered) / Double(line.bound))
            var cases = "\(line.cases)"
            if line.notApplicable > 0 { cases += " (\(line.notApplicable) n/a)" }
            if line.refused > 0 { cases += " (\(line.refused) refused)" }
            text += pad([
                line.kind.rawValue, cases, "\(line.bound)", "\(line.recovered)", recall, "\(line.correct)",
                "\(line.junk)", "\(line.altered)", "\(line.resurrected)",
                line.recoverCorrect.map(String.init) ?? "-", line.recoverWrong.map(String.init) ?? "-",
            ])
        }
        return text
    }

    private func pad(_ cells: [String]) -> String {
        let widths = [22, 16, 8, 10, 8, 8, 6, 8, 8, 12, 12]
        return zip(cells, widths).map { cell, width in
            cell.count >= width ? cell + " " : cell + String(repeating: " ", count: width - cell.count)
        }.joined() + "\n"
    }
}
