import XCTest
final class RepairSmokeTests: XCTestCase { func testNothing() { XCTAssertTrue(true) } }
