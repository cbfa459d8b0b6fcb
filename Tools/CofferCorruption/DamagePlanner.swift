// DamagePlanner — turns (page roles, kind, seed) into byte edits. Pure: no file access, so a plan can be
// computed, printed and tested without touching a file, and applying it is a separate small step.
//
// Choices, and why:
// - Targets are drawn from the pristine file's roles (PageRoles), so `zero-interior` hits an interior page
//   and `damage-freelist-trunk` a trunk, whatever the file's layout.
// - On an encrypted file, flips avoid the salt (bytes 0–15 of page 1: that is `flip-salt`'s job) and the 12
//   unauthenticated trailing bytes of each page (a flip there changes nothing, so the page would be reported
//   touched while still intact).
// - A kind that needs a structure the file lacks (no interior page, no freelist, no overflow page) fails
//   with `CorruptionError.noTarget` instead of silently damaging something else.

import CofferRepair
import CofferTestSupport

/// One change to the copied file.
public enum ByteEdit: Sendable, Equatable {
    /// Write `bytes` at `offset`.
    case write(offset: UInt64, bytes: [UInt8])
    /// XOR the byte at `offset` with `mask`.
    case xor(offset: UInt64, mask: UInt8)
    /// Cut the file to `size` bytes.
    case truncate(size: UInt64)
}

/// The edits of one injection and the pages they touch.
public struct DamagePlan: Sendable, Equatable {
    /// Edits in the order they are applied.
    public var edits: [ByteEdit] = []
    /// Pages changed or removed.
    public var touched: Set<UInt32> = []
    /// The new size when truncating.
    public var truncatedTo: UInt64?
    /// Whether page 1's bytes 0–15 change.
    public var touchesFirst16Bytes = false
}

/// Why an injection could not be planned or applied.
public enum CorruptionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input could not be opened as a database (wrong key, not a database…).
    case cannotOpen(String)
    /// The file has no page of the role the kind needs.
    case noTarget(kind: DamageKind, reason: String)
    /// The WAL has no frame the WAL damage kind needs.
    case noWALTarget(kind: WALDamageKind, reason: String)
    /// Copying or writing failed.
    case io(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .cannotOpen(let reason): return "cannot open input: \(reason)"
        case .noTarget(let kind, let reason): return "\(kind.rawValue): \(reason)"
        case .noWALTarget(let kind, let reason): return "\(kind.rawValue): \(reason)"
        case .io(let reason): return "I/O error: \(reason)"
        }
    }
}

/// Plans damage from page roles and a seed.
public struct DamagePlanner: Sendable {
    /// Roles of the pristine file: `roles[n - 1]` is page n's.
    public let roles: [PageRole]
    /// The page size.
    public let pageSize: Int
    /// Whether the file is encrypted (reserve of 48 bytes, salt in bytes 0–15).
    public let encrypted: Bool
    /// The pristine file size in bytes.
    public let fileSize: UInt64

    /// Creates a planner.
    public init(roles: [PageRole], pageSize: Int, encrypted: Bool, fileSize: UInt64) {
        self.roles = roles
        self.pageSize = pageSize
        self.encrypted = encrypted
        self.fileSize = fileSize
    }

    private var pageCount: Int { roles.count }

    private func offset(_ page: UInt32, _ inPage: Int = 0) -> UInt64 {
        UInt64(page - 1) * UInt64(pageSize) + UInt64(inPage)
    }

    private func pages(_ wanted: Set<PageRole>) -> [UInt32] {
        roles.indices.filter { wanted.contains(roles[$0]) }.map { UInt32($0 + 1) }
    }

    /// The plan for `kind` from `seed`. `count` overrides the number of pages (flip-bytes, runs).
    public func plan(kind: DamageKind, seed: UInt64, count: Int? = nil) throws(CorruptionError) -> DamagePlan {
        var random = SeededGenerator(seed: seed ^ UInt64(truncatingIfNeeded: kind.rawValue.hashValueStable))
        var plan = DamagePlan()
        guard pageCount >= 2 else { throw .noTarget(kind: kind, reason: "the file has fewer than two pages") }
        switch kind {
        case .flipBytes:
            let all = roles.indices.map { UInt32($0 + 1) }
            for page in random.sample(all, count: max(1, count ?? 3)) {
                for _ in 0..<random.int(in: 1...8) { flip(page, &plan, &random) }
            }
        case .zeroInterior:
            var candidates = pages([.tableInterior])
            if candidates.isEmpty { candidates = pages([.indexInterior]) }
            guard !candidates.isEmpty else { throw .noTarget(kind: kind, reason: "the file has no interior page") }
            zero(candidates[random.int(in: 0...(candidates.count - 1))], &plan)
        case .zeroPage1:
            zero(1, &plan)
        case .overwriteHeader:
            plan.edits.append(.write(offset: 0, bytes: random.bytes(100)))
            plan.touched.insert(1)
            plan.touchesFirst16Bytes = true
        case .truncate:
            let firstCut = max(2, pageCount * 3 / 4)
            let cutPage = random.int(in: firstCut...pageCount)
            let midPage = random.int(in: 0...1) == 1
            let size = offset(UInt32(cutPage)) + (midPage ? UInt64(random.int(in: 1...(pageSize - 1))) : 0)
            plan.edits.append(.truncate(size: size))
            plan.truncatedTo = size
            plan.touched.formUnion((UInt32(cutPage)...UInt32(pageCount)))
        case .garbageRun:
            let length = min(pageCount - 1, max(1, count ?? random.int(in: 2...6)))
            let start = random.int(in: 2...(pageCount - length + 1))
            for page in start..<(start + length) {
                plan.edits.append(.write(offset: offset(UInt32(page)), bytes: random.bytes(pageSize)))
                plan.touched.insert(UInt32(page))
            }
        case .zeroLeafRun:
            let leaves = Set(pages([.tableLeaf, .indexLeaf]))
            guard !leaves.isEmpty else { throw .noTarget(kind: kind, reason: "the file has no leaf page") }
            let wanted = max(1, count ?? random.int(in: 2...5))
            let sorted = leaves.sorted()
            var page = sorted[random.int(in: 0...(sorted.count - 1))]
            var run = 0
            while run < wanted, leaves.contains(page) {
                zero(page, &plan)
                run += 1
                page += 1
            }
        case .damageOverflow:
            let candidates = pages([.overflow])
            guard !candidates.isEmpty else { throw .noTarget(kind: kind, reason: "the file has no overflow page") }
            let page = candidates[random.int(in: 0...(candidates.count - 1))]
            let length = random.int(in: 16...64)
            let usableEnd = pageSize - (encrypted ? 48 : 0)
            let start = random.int(in: 4...(usableEnd - length))
            plan.edits.append(.write(offset: offset(page, start), bytes: random.bytes(length)))
            plan.touched.insert(page)
        case .damageFreelistTrunk:
            let candidates = pages([.freelistTrunk])
            guard !candidates.isEmpty else { throw .noTarget(kind: kind, reason: "the file has no freelist trunk") }
            let page = candidates[random.int(in: 0...(candidates.count - 1))]
            plan.edits.append(.write(offset: offset(page), bytes: random.bytes(pageSize)))
            plan.touched.insert(page)
        case .flipSalt:
            for position in random.sample(Array(0..<16), count: random.int(in: 1...4)) {
                plan.edits.append(.xor(offset: UInt64(position), mask: random.nonZeroByte()))
            }
            plan.touched.insert(1)
            plan.touchesFirst16Bytes = true
        }
        return plan
    }

    private func zero(_ page: UInt32, _ plan: inout DamagePlan) {
        plan.edits.append(.write(offset: offset(page), bytes: [UInt8](repeating: 0, count: pageSize)))
        plan.touched.insert(page)
        if page == 1 { plan.touchesFirst16Bytes = true }
    }

    private func flip(_ page: UInt32, _ plan: inout DamagePlan, _ random: inout SeededGenerator) {
        let low = encrypted && page == 1 ? 16 : 0
        let high = pageSize - (encrypted ? 13 : 1)
        plan.edits.append(.xor(offset: offset(page, random.int(in: low...high)), mask: random.nonZeroByte()))
        plan.touched.insert(page)
    }
}

extension String {
    /// FNV-1a over the UTF-8 bytes: a hash that, unlike `hashValue`, is the same in every process, so each
    /// kind draws a different stream from the same seed.
    var hashValueStable: UInt64 {
        utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}
