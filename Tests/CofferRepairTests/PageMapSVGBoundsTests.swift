import Foundation
import XCTest

@testable import CofferRepair

#if canImport(FoundationXML)
import FoundationXML
#endif

/// A map of millions of pages stays a bounded, well-formed SVG: pages are grouped into cells, a cell shows
/// its group's worst fate, and the legend still counts every page.
final class PageMapSVGBoundsTests: XCTestCase {
    func testThreeMillionPagesStayBounded() throws {
        let count = 3_000_000
        var map = PageMap(
            pageSize: 4096, kinds: [PageKind](repeating: .tableLeaf, count: count),
            fates: [PageFate](repeating: .ok, count: count), owners: [Int32](repeating: 0, count: count),
            ownerNames: ["t"])
        for page in stride(from: 0, to: count, by: 997) { map.kinds[page] = .indexLeaf }
        map.fates[1_234_567] = .hmacFailed
        let svg = PageMapSVG.render(map, title: "large <file> & co")
        XCTAssertLessThan(svg.utf8.count, 4_000_000, "bounded by the cell count, not the page count")
        XCTAssertTrue(svg.contains(#"data-pages="3000000" data-pages-per-cell="75""#))
        XCTAssertTrue(svg.contains(#"data-name="hmacFailed" data-count="1""#))
        XCTAssertTrue(svg.contains(#"data-name="t" data-count="3000000""#))
        XCTAssertTrue(svg.contains(#"class="f5""#), "the one damaged page still shows in its cell")
        let parser = XMLParser(data: Data(svg.utf8))
        XCTAssertTrue(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
    }
}
