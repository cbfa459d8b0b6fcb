// PageMapSVG — draws a PageMap as an SVG: a grid of cells in page order (left to right, top to bottom),
// each filled with its kind's colour; a fate other than ok paints over it (damage fills the cell, a
// fate of a readable page — orphan, adopted, from the WAL — is a band across it). Below: the legend with
// the count of every kind, then every fate on a line of its own with its count and what an operator can do
// about it (PageFate.advice), then pages per table and index.
//
// Size stays bounded: at most `maxCells` cells (40 000 by default); a larger file groups consecutive pages
// into one cell (its kind the group's most common, its fate the group's worst, in the order of PageFate),
// and adjacent cells that look alike on a row are one rectangle. The owner list shows the 40 largest.
// Counts are also in `data-` attributes (`data-group`, `data-name`, `data-count`) for tools and tests.

/// Renders a ``PageMap`` as SVG text.
///
/// ```swift
/// let svg = PageMapSVG.render(PageMap.build(file: file), title: "damaged.db")
/// ```
public enum PageMapSVG {
    /// The fill colour of each kind.
    static func colour(_ kind: PageKind) -> String {
        switch kind {
        case .tableInterior: "#1f4e79"
        case .tableLeaf: "#5b9bd5"
        case .indexInterior: "#385723"
        case .indexLeaf: "#a9d18e"
        case .overflow: "#ffd966"
        case .freelist: "#e7e6e6"
        case .pointerMap: "#b4a7d6"
        case .unknown: "#7f7f7f"
        }
    }

    /// The colour of each fate (nil for ok).
    static func colour(_ fate: PageFate) -> String? {
        switch fate {
        case .ok: nil
        case .fromWAL: "#7030a0"
        case .orphan: "#ff9900"
        case .adopted: "#00b050"
        case .unparseable: "#000000"
        case .hmacFailed: "#e00000"
        case .lost: "#ff33cc"
        }
    }

    /// Whether a fate fills the whole cell (the page's content is gone) rather than a band across it.
    static func fills(_ fate: PageFate) -> Bool { fate == .hmacFailed || fate == .lost || fate == .unparseable }

    /// The SVG for `map`, headed by `title`, with at most `maxCells` cells.
    public static func render(_ map: PageMap, title: String, maxCells: Int = 40_000) -> String {
        let count = map.pageCount
        let perCell = max(1, (count + max(1, maxCells) - 1) / max(1, maxCells))
        let cells = (count + perCell - 1) / perCell
        let columns = cells <= 4096 ? 64 : 200
        let size = cells <= 4096 ? 10 : 4
        let rows = (cells + columns - 1) / columns
        let gridTop = 50
        // Wide enough for the longest fate line of the legend.
        let width = max(columns * size + 20, 860)
        var out: [String] = []
        var y = gridTop + rows * size + 30
        // Cells: kind by majority, fate by severity; runs of equal cells on a row merged.
        var styles: [(PageKind, PageFate)] = []
        styles.reserveCapacity(cells)
        for cell in 0..<cells {
            let range = (cell * perCell)..<min(count, (cell + 1) * perCell)
            var tally = [Int](repeating: 0, count: PageKind.allCases.count)
            var worst = PageFate.ok
            for page in range {
                tally[Int(map.kinds[page].rawValue)] += 1
                if map.fates[page].rawValue > worst.rawValue { worst = map.fates[page] }
            }
            let kind = PageKind(rawValue: UInt8(tally.indices.max { tally[$0] < tally[$1] } ?? 7)) ?? .unknown
            styles.append((kind, worst))
        }
        for row in 0..<rows {
            var column = 0
            while column < columns, row * columns + column < cells {
                let style = styles[row * columns + column]
                var run = 1
                while column + run < columns, row * columns + column + run < cells,
                    styles[row * columns + column + run] == style
                {
                    run += 1
                }
                let x = 10 + column * size
                let top = gridTop + row * size
                out.append(
                    #"<rect x="\#(x)" y="\#(top)" width="\#(run * size)" height="\#(size)" class="k\#(style.0.rawValue)"/>"#)
                if colour(style.1) != nil {
                    let band = fills(style.1) ? (top, size) : (top + size / 4, max(1, size / 2))
                    out.append(
                        #"<rect x="\#(x)" y="\#(band.0)" width="\#(run * size)" height="\#(band.1)" class="f\#(style.1.rawValue)"/>"#
                    )
                }
                column += run
            }
        }
        // Legend: kinds, then fates, each with its count.
        let kindCounts = map.kindCounts
        let fateCounts = map.fateCounts
        out.append(#"<text x="10" y="\#(y)" class="h">Kinds</text>"#)
        y += 18
        for (index, kind) in PageKind.allCases.enumerated() {
            let x = 10 + (index % 4) * 175
            let top = y + (index / 4) * 18
            out.append(
                #"<g data-group="kind" data-name="\#(kind)" data-count="\#(kindCounts[kind] ?? 0)"><rect x="\#(x)" y="\#(top - 10)" width="12" height="12" class="k\#(kind.rawValue)"/><text x="\#(x + 16)" y="\#(top)">\#(kind.name): \#(kindCounts[kind] ?? 0)</text></g>"#
            )
        }
        y += 2 * 18 + 14
        out.append(#"<text x="10" y="\#(y)" class="h">Fates, and what to do</text>"#)
        y += 18
        // One line per fate: the advice is what a reader of the picture acts on, too long to share a line.
        for fate in PageFate.allCases {
            let swatch =
                colour(fate).map { _ in #"<rect x="10" y="\#(y - 10)" width="12" height="12" class="f\#(fate.rawValue)"/>"# }
                ?? #"<rect x="10.5" y="\#(Double(y) - 9.5)" width="11" height="11" fill="white" stroke="dimgray"/>"#
            out.append(
                #"<g data-group="fate" data-name="\#(fate)" data-count="\#(fateCounts[fate] ?? 0)">\#(swatch)<text x="26" y="\#(y)">\#(fate.name): \#(fateCounts[fate] ?? 0) — \#(escape(fate.advice))</text></g>"#
            )
            y += 18
        }
        y += 14
        // Pages per table and index, largest first.
        let owners = map.ownerCounts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        out.append(#"<text x="10" y="\#(y)" class="h">Pages per table and index</text>"#)
        y += 18
        for (name, pages) in owners.prefix(40) {
            out.append(
                #"<text x="10" y="\#(y)" data-group="owner" data-name="\#(escape(name))" data-count="\#(pages)">\#(escape(name)): \#(pages)</text>"#
            )
            y += 16
        }
        if owners.count > 40 {
            let rest = owners.dropFirst(40)
            out.append(
                #"<text x="10" y="\#(y)">… \#(rest.count) more: \#(rest.map(\.value).reduce(0, +)) pages</text>"#)
            y += 16
        }
        let scale = perCell == 1 ? "1 cell = 1 page" : "1 cell = \(perCell) pages (kind: the most common; fate: the worst)"
        let head = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(width)" height="\#(y + 10)" viewBox="0 0 \#(width) \#(y + 10)" data-pages="\#(count)" data-pages-per-cell="\#(perCell)" data-page-size="\#(map.pageSize)">"#,
            "<style>text{font:12px sans-serif;fill:#222}.h{font-weight:bold}"
                + PageKind.allCases.map { ".k\($0.rawValue){fill:\(colour($0))}" }.joined()
                + PageFate.allCases.compactMap { fate in colour(fate).map { ".f\(fate.rawValue){fill:\($0)}" } }.joined()
                + "</style>",
            #"<rect width="100%" height="100%" fill="white"/>"#,
            #"<text x="10" y="20" class="h">\#(escape(title))</text>"#,
            #"<text x="10" y="38">\#(count) pages of \#(map.pageSize) bytes, in file order; \#(scale)</text>"#,
        ]
        return (head + out + ["</svg>"]).joined(separator: "\n") + "\n"
    }

    /// `text` with XML's special characters escaped.
    static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            // XML 1.0 has no way to write most control characters, even escaped.
            case _ where character.unicodeScalars.contains { $0.value < 0x20 }: result += "?"
            default: result.append(character)
            }
        }
        return result
    }
}
