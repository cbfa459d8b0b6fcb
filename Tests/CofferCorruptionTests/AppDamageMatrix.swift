// AppDamageMatrix — sums the cases of the realistic-corpus damage matrix per damage kind × profile and renders
// them as the markdown table CofferRepair's Repair.md quotes.

struct AppDamageMatrix {
    struct Line {
        var cases = 0
        var notApplicable = 0
        var refused = 0
        var bound = 0
        var recovered = 0
        var altered = 0
        var junk = 0
        var resurrected = 0
        var queriesExpected = 0
        var queriesExact = 0
        var virtualTablesUnaccounted = 0
        var inputsChanged = 0
        var baselineRecovered: Int?
        var baselineWrong: Int?

        var recall: Double? { bound == 0 ? nil : Double(recovered) / Double(bound) }
        var baselineRecall: Double? { baselineRecovered.flatMap { bound == 0 ? nil : Double($0) / Double(bound) } }

        mutating func add(_ result: AppCaseResult) {
            cases += 1
            if result.refused { refused += 1 }
            bound += result.score.bound
            recovered += result.score.recoveredInBound
            altered += result.score.altered
            junk += result.score.junk
            resurrected += result.score.resurrected
            queriesExpected += result.queriesExpected
            queriesExact += result.queriesExact
            virtualTablesUnaccounted += result.virtualTablesUnaccounted.count
            if !result.inputsUntouched { inputsChanged += 1 }
            if let count = result.baselineRecovered { baselineRecovered = (baselineRecovered ?? 0) + count }
            if let count = result.baselineWrong { baselineWrong = (baselineWrong ?? 0) + count }
        }
    }

    static let profiles = ["plaintext", "sqlcipher3", "sqlcipher4"]
    var lines: [String: [String: Line]] = [:]
    var baselineName = ".recover"

    subscript(kind: AppDamageKind, profile: String) -> Line {
        get { lines[kind.description]?[profile] ?? Line() }
        set { lines[kind.description, default: [:]][profile] = newValue }
    }

    func render() -> String {
        var text = "| damage | profile | cases | bound | recall | altered | junk | stale/resurr. | queries exact | "
        text += "vtabs lost | inputs changed | \(baselineName) recall | \(baselineName) wrong |\n"
        text += "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        for kind in AppDamageKind.all {
            for profile in Self.profiles {
                let line = self[kind, profile]
                var cases = "\(line.cases)"
                if line.notApplicable > 0 { cases += " (+\(line.notApplicable) n/a)" }
                if line.refused > 0 { cases += " (\(line.refused) refused)" }
                let cells = [
                    kind.description, profile, cases, "\(line.bound)", Self.percent(line.recall), "\(line.altered)",
                    "\(line.junk)", "\(line.resurrected)", "\(line.queriesExact)/\(line.queriesExpected)",
                    "\(line.virtualTablesUnaccounted)", "\(line.inputsChanged)", Self.percent(line.baselineRecall),
                    line.baselineWrong.map(String.init) ?? "–",
                ]
                text += "| " + cells.joined(separator: " | ") + " |\n"
            }
        }
        return text
    }

    static func percent(_ value: Double?) -> String {
        guard let value else { return "–" }
        let digits = (value * 1000).rounded(.down) / 10
        return "\(digits)%"
    }
}
