import CofferRepair
import Foundation

/// Writes `--page-map FILE.svg` for `coffer verify` and `coffer repair` (PageMap, PageMapSVG).
enum PageMapOutput {
    /// The map of `file` (overlaid with its WAL) as verify sees it: no page adopted.
    static func write(file: DatabaseFile, to path: String) throws {
        try write(PageMap.build(file: file), title: "coffer verify \(file.path)", to: path)
    }

    /// The map of the pages `salvager` read, with the orphans its last run adopted.
    static func write(salvager: Salvager, to path: String) throws {
        let map = PageMap.build(
            source: salvager.source, wal: salvager.wal?.index, adopted: Set(salvager.adoptedPages),
            plaintext: !salvager.file.settings.isEncrypted)
        try write(map, title: "coffer repair \(salvager.file.path)", to: path)
    }

    private static func write(_ map: PageMap, title: String, to path: String) throws {
        do {
            try PageMapSVG.render(map, title: title).write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw CLIFailure(status: .failure, message: "cannot write the page map \(path): \(error)")
        }
    }
}
