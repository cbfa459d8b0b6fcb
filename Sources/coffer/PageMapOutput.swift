import CofferRepair
import Foundation

/// Writes `--page-map FILE.svg` for `coffer verify` and `coffer repair` (PageMap, PageMapSVG). Both maps come
/// from the same classifier; only the pages repair adopted differ (see PageMap.swift).
enum PageMapOutput {
    /// The map of `file` (overlaid with its WAL) as verify sees it: no page adopted.
    static func write(file: DatabaseFile, to path: String) throws {
        try write(PageMap.build(file: file), title: "coffer verify \(file.path)", to: path)
    }

    /// The map of the pages `salvager` read, with the orphans its last run adopted.
    static func write(salvager: Salvager, to path: String) throws {
        try write(PageMap.build(salvager: salvager), title: "coffer repair \(salvager.file.path)", to: path)
    }

    private static func write(_ map: PageMap, title: String, to path: String) throws {
        do {
            try PageMapSVG.render(map, title: title).write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw CLIFailure(status: .failure, message: "cannot write the page map \(path): \(error)")
        }
    }
}
