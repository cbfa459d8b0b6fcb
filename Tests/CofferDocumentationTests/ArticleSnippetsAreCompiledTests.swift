import Foundation
import XCTest

/// Every ```swift block of the DocC articles must appear, verbatim up to whitespace, in a file of this
/// test target, where it is compiled and run (one `<Article>ArticleTests.swift` per article). A block that
/// is not meant to compile is fenced as ```text, or starts with a `// not compiled: <reason>` line.
final class ArticleSnippetsAreCompiledTests: XCTestCase {
    /// The package's root, from this file's path (Tests/CofferDocumentationTests/<this file>).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The documentation catalogs whose articles are checked.
    static let catalogs = ["Sources/Coffer/Documentation.docc", "Sources/CofferRepair/Documentation.docc"]

    func testEveryArticleSnippetIsCompiledByThisTarget() throws {
        let testFiles = try Self.swiftFiles(in: Self.packageRoot.appendingPathComponent("Tests/CofferDocumentationTests"))
        XCTAssertFalse(testFiles.isEmpty)
        let compiled = try testFiles.map { Self.normalized(try String(contentsOf: $0, encoding: .utf8)) }

        var articles: [URL] = []
        for catalog in Self.catalogs {
            let directory = Self.packageRoot.appendingPathComponent(catalog)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".md") }
            articles += names.sorted().map { directory.appendingPathComponent($0) }
        }
        XCTAssertGreaterThanOrEqual(articles.count, 18, "the articles were not found from \(#filePath)")

        var checked = 0
        for article in articles {
            let text = try String(contentsOf: article, encoding: .utf8)
            for block in Self.swiftBlocks(in: text) {
                let firstLine = block.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) }
                if firstLine?.hasPrefix("// not compiled:") == true { continue }
                checked += 1
                let wanted = Self.normalized(block)
                if !compiled.contains(where: { $0.contains(wanted) }) {
                    XCTFail(
                        """
                        \(article.lastPathComponent): this ```swift block is in no file of CofferDocumentationTests \
                        (copy it into \(article.deletingPathExtension().lastPathComponent)ArticleTests.swift, or fix \
                        the article):
                        \(block)
                        """)
                }
            }
        }
        XCTAssertGreaterThan(checked, 0)
    }

    /// The checker itself: what it extracts and how it compares.
    func testTheCheckerFindsBlocksAndIgnoresWhitespace() {
        let article = """
            Text.

            ```swift
            let a = 1   // one
            ```

            ```text
            not swift
            ```

            ```swift
            // not compiled: an example of the marker
              let b =    2
            ```
            """
        let blocks = Self.swiftBlocks(in: article)
        XCTAssertEqual(blocks, ["let a = 1   // one", "// not compiled: an example of the marker\n  let b =    2"])
        XCTAssertEqual(Self.normalized("  let b =    2\n\n    let c = 3  "), "let b = 2\nlet c = 3")
        XCTAssertTrue(Self.normalized("func f() {\n        let a = 1 // one\n}").contains(Self.normalized(blocks[0])))
    }

    /// The contents of the ```swift fenced blocks of a Markdown text, in order.
    static func swiftBlocks(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var lines = current {
                if trimmed == "```" {
                    blocks.append(lines.joined(separator: "\n"))
                    current = nil
                } else {
                    lines.append(line)
                    current = lines
                }
            } else if trimmed == "```swift" {
                current = []
            }
        }
        return blocks
    }

    /// `text` with each line trimmed, runs of whitespace collapsed to one space, and empty lines dropped.
    static func normalized(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline)
            .map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
            .filter { !$0.isEmpty }
            .joined(separator: "\n")
    }

    static func swiftFiles(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }.sorted()
            .map { directory.appendingPathComponent($0) }
    }
}
