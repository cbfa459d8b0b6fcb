import CofferCorruption
import CofferRepair
import XCTest

/// The planner aims each kind at the role it names, stays inside the file, and is a function of the seed.
final class DamagePlannerTests: XCTestCase {
    /// A synthetic 40-page layout: header, interiors, leaf runs, overflow, a freelist.
    private let roles: [PageRole] = (1...40).map { number -> PageRole in
        switch number {
        case 1: return .header
        case 2, 9: return .tableInterior
        case 3...8, 10...20: return .tableLeaf
        case 21...24: return .overflow
        case 25: return .indexInterior
        case 26...32: return .indexLeaf
        case 33: return .freelistTrunk
        default: return .freelistLeaf
        }
    }

    private func planner(encrypted: Bool) -> DamagePlanner {
        DamagePlanner(roles: roles, pageSize: 1024, encrypted: encrypted, fileSize: 40 * 1024)
    }

    private func role(_ page: UInt32) -> PageRole { roles[Int(page) - 1] }

    func testEachKindTouchesPagesOfItsRole() throws {
        for seed in UInt64(1)...20 {
            let plain = planner(encrypted: false)
            XCTAssertEqual(try plain.plan(kind: .zeroInterior, seed: seed).touched.map(role), [.tableInterior])
            XCTAssertEqual(try plain.plan(kind: .zeroPage1, seed: seed).touched, [1])
            XCTAssertEqual(try plain.plan(kind: .damageOverflow, seed: seed).touched.map(role), [.overflow])
            XCTAssertEqual(try plain.plan(kind: .damageFreelistTrunk, seed: seed).touched, [33])
            let run = try plain.plan(kind: .zeroLeafRun, seed: seed).touched.sorted()
            XCTAssertFalse(run.isEmpty)
            XCTAssertTrue(run.allSatisfy { [.tableLeaf, .indexLeaf].contains(role($0)) })
            XCTAssertEqual(run.last.map { $0 - run[0] + 1 }, UInt32(run.count), "consecutive pages")
            let garbage = try plain.plan(kind: .garbageRun, seed: seed).touched
            XCTAssertTrue((2...6).contains(garbage.count) && !garbage.contains(1))
            XCTAssertEqual(try plain.plan(kind: .flipBytes, seed: seed).touched.count, 3)
            XCTAssertEqual(try plain.plan(kind: .flipBytes, seed: seed, count: 5).touched.count, 5)
        }
    }

    func testTruncationRemovesTheTailFromTheCutPage() throws {
        for seed in UInt64(1)...20 {
            let plan = try planner(encrypted: false).plan(kind: .truncate, seed: seed)
            let size = try XCTUnwrap(plan.truncatedTo)
            XCTAssertLessThan(size, 40 * 1024)
            XCTAssertGreaterThanOrEqual(size, 1024)
            let firstCut = UInt32(size / 1024) + 1
            XCTAssertEqual(plan.touched, Set(firstCut...40), "a partial page counts as removed")
        }
    }

    func testEncryptedFlipsSpareTheSaltAndTheUnauthenticatedTail() throws {
        let encrypted = planner(encrypted: true)
        for seed in UInt64(1)...200 {
            let plan = try encrypted.plan(kind: .flipBytes, seed: seed, count: 40)
            XCTAssertFalse(plan.touchesFirst16Bytes)
            for case .xor(let offset, let mask) in plan.edits {
                XCTAssertNotEqual(mask, 0)
                XCTAssertGreaterThanOrEqual(offset, 16)
                XCTAssertLessThan(offset % 1024, 1024 - 12, "the last 12 bytes of a page are not authenticated")
            }
        }
        XCTAssertTrue(try encrypted.plan(kind: .flipSalt, seed: 3).touchesFirst16Bytes)
        XCTAssertTrue(try encrypted.plan(kind: .overwriteHeader, seed: 3).touchesFirst16Bytes)
    }

    func testSameSeedSamePlanOtherSeedOtherPlan() throws {
        let plain = planner(encrypted: false)
        for kind in DamageKind.allCases {
            XCTAssertEqual(try plain.plan(kind: kind, seed: 11), try plain.plan(kind: kind, seed: 11), kind.rawValue)
        }
        let plans = try (UInt64(1)...10).map { try plain.plan(kind: .garbageRun, seed: $0) }
        XCTAssertGreaterThan(Set(plans.map { $0.touched.sorted() }).count, 3)
    }

    func testMissingStructureIsReportedNotSubstituted() {
        let noFreelist = roles.map { $0 == .freelistTrunk || $0 == .overflow ? PageRole.tableLeaf : $0 }
        let planner = DamagePlanner(roles: noFreelist, pageSize: 1024, encrypted: false, fileSize: 40 * 1024)
        XCTAssertThrowsError(try planner.plan(kind: .damageFreelistTrunk, seed: 1)) { error in
            guard case CorruptionError.noTarget(.damageFreelistTrunk, _)? = error as? CorruptionError else {
                return XCTFail("\(error)")
            }
        }
        XCTAssertThrowsError(try planner.plan(kind: .damageOverflow, seed: 1))
    }
}
