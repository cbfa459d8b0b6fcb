// DamageReport — what the injector did, precisely enough to compute which rows must survive.

import CofferRepair

/// One page the injector changed (or removed, for truncation), with its role in the pristine file.
public struct TouchedPage: Sendable, Codable, Equatable {
    /// The page number (1-based).
    public var page: UInt32
    /// Its role in the pristine file (``PageRole`` raw value, e.g. `tableLeaf`).
    public var role: String
    /// The table or index that owned it in the pristine file, if any.
    public var owner: String?

    /// Creates a record of one touched page.
    public init(page: UInt32, role: String, owner: String?) {
        self.page = page
        self.role = role
        self.owner = owner
    }
}

/// The result of one injection. Encoded as JSON by `coffer-corrupt --json`.
public struct DamageReport: Sendable, Codable, Equatable {
    /// The kind of damage.
    public var kind: DamageKind
    /// The seed it was drawn from.
    public var seed: UInt64
    /// The pages changed or removed, in ascending order.
    public var pages: [TouchedPage]
    /// The page size of the file.
    public var pageSize: Int
    /// Pages in the pristine file.
    public var pageCount: UInt32
    /// Whether the file is encrypted.
    public var encrypted: Bool
    /// The new file size, when the file was truncated.
    public var truncatedTo: UInt64?
    /// Whether bytes 0–15 changed on an encrypted file: without the salt no page can be decrypted from the
    /// passphrase, so every row is out of reach.
    public var saltDamaged: Bool

    /// The touched page numbers.
    public var touchedPageNumbers: Set<UInt32> { Set(pages.map(\.page)) }

    /// Whether page `page` still holds its pristine bytes and can be read (decrypted) as before.
    public func isIntact(_ page: UInt32) -> Bool {
        !saltDamaged && !touchedPageNumbers.contains(page)
    }

    enum CodingKeys: String, CodingKey {
        case kind, seed, pages
        case pageSize = "page_size"
        case pageCount = "page_count"
        case encrypted
        case truncatedTo = "truncated_to"
        case saltDamaged = "salt_damaged"
    }
}
