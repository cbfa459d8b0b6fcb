import XCTest
@testable import Coffer
final class SmokeTests: XCTestCase { func testVersion() { XCTAssertEqual(CofferVersion.sqlite, "3.15.2") } }
