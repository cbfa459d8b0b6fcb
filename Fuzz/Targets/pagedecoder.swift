// Fuzz target: the encrypted page decoder (SQLCipher 3, 1024-byte pages, a fixed raw key).
// A page failing its HMAC must be rejected before any parsing: decode succeeds only for an all-zero page or
// one that authenticates; what it returns then goes through the B-tree parser.
// Byte 0: odd → page 1 (its salt is its own first 16 bytes); even → page 2, salt = the next 16 bytes.

@testable import CofferFormat

let fuzzRawKey = [UInt8](repeating: 0x5a, count: 32)
let fuzzSettings = CipherSettings.sqlcipher3.with(pageSize: 1024)

func fuzz_pagedecoder(_ bytes: [UInt8]) {
    guard let control = bytes.first else { return }
    let pageNumber: UInt32 = control & 1 == 1 ? 1 : 2
    var rest = Array(bytes.dropFirst())
    let salt: [UInt8]
    if pageNumber == 1 {
        salt = Array(rest.prefix(16))
    } else {
        salt = Array(rest.prefix(16))
        rest = Array(rest.dropFirst(16))
    }
    guard salt.count == 16, let keys = try? DerivedKeys(key: .rawKey(fuzzRawKey), salt: salt, settings: fuzzSettings)
    else { return }
    let decoder = PageDecoder(settings: fuzzSettings, keys: keys, pageSize: 1024)
    let raw = Array(rest.prefix(1024))
    let result = decoder.decode(raw, pageNumber: pageNumber)
    switch result {
    case .success(let page):
        fuzzCheck(raw.count == 1024, "accepted a page of \(raw.count) bytes")
        fuzzCheck(
            ByteView(raw).isAllZero || decoder.authenticates(raw, pageNumber: pageNumber),
            "accepted a page that does not authenticate")
        fuzzCheck(page.count == 1024, "plaintext size")
        if let tree = BTreePage(bytes: page, pageNumber: pageNumber, usableSize: decoder.usableSize) {
            _ = tree.cells(maxPayload: 1 << 20, maxPage: 1000)
        }
    case .failure(let failure):
        if raw.count == 1024, !ByteView(raw).isAllZero {
            fuzzCheck(failure == .badHMAC || decoder.authenticates(raw, pageNumber: pageNumber), "wrong failure")
        }
    }
}
