// Fuzz target: one B-tree page → cells, for every page type, page 1 (header at 100) and not.
// Byte 0 picks page 1 or not and the reserve; the rest is the page (padded/cut to a valid size).

@testable import CofferFormat

func fuzz_page(_ bytes: [UInt8]) {
    guard let control = bytes.first else { return }
    let pageNumber: UInt32 = control & 1 == 1 ? 1 : 2 + UInt32(control >> 4)
    let reserve = control & 2 == 2 ? 48 : 0
    var page = Array(bytes.dropFirst())
    let pageSize = page.count <= 512 ? 512 : (page.count <= 1024 ? 1024 : 4096)
    page = Array(page.prefix(pageSize))
    page += [UInt8](repeating: 0, count: pageSize - page.count)
    let usable = pageSize - reserve
    guard let tree = BTreePage(bytes: page, pageNumber: pageNumber, usableSize: usable) else { return }
    let maxPage: UInt32 = 64
    let maxPayload = Int(maxPage) * usable
    guard let cells = tree.cells(maxPayload: maxPayload, maxPage: maxPage) else { return }
    fuzzCheck(cells.count == tree.header.cellCount, "cell count")
    let layout = PayloadLayout(usableSize: usable)
    for cell in cells {
        fuzzCheck((cell.leftChild != nil) == !tree.type.isLeaf, "left child iff interior")
        fuzzCheck((cell.rowid != nil) == tree.type.isTable, "rowid iff table page")
        if let child = cell.leftChild { fuzzCheck(child >= 1 && child <= maxPage, "child in range") }
        if tree.type == .tableInterior { continue }
        fuzzCheck(cell.payloadSize <= maxPayload, "payload bound")
        fuzzCheck(cell.localPayload.count == layout.localSize(payloadSize: cell.payloadSize, type: tree.type), "local size")
        fuzzCheck((cell.overflowPage != nil) == (cell.localPayload.count < cell.payloadSize), "overflow iff spilled")
        if let first = cell.overflowPage { fuzzCheck(first >= 2 && first <= maxPage, "overflow page in range") }
        if cell.overflowPage == nil, let values = RecordDecoder.decode(cell.localPayload) {
            checkRecord(cell.localPayload, values)
        }
    }
}
