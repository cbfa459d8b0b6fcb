import Coffer
import XCTest

/// `Connection.withAuthorizer`: SQLite asks the policy about every action while it prepares a statement,
/// a denied action fails the prepare, and the authorizer is gone once the body returns.
final class ConnectionAuthorizerTests: XCTestCase {
    func testPolicySeesEveryActionAndDeniesWhatItRefuses() throws {
        let database = try Database.inMemory()
        try database.writeWithoutTransaction { connection in
            var seen: [AuthorizerRequest] = []
            try connection.withAuthorizer({ request in
                seen.append(request)
                return request.action != .attach
            }) {
                try connection.execute(sql: "CREATE TABLE t(a CHECK (length(a) > 0))")
                XCTAssertThrowsError(try connection.execute(sql: "ATTACH ':memory:' AS other")) { error in
                    XCTAssertEqual((error as? CofferError)?.code.primary, ResultCode(rawValue: 23), "SQLITE_AUTH")
                    XCTAssertEqual((error as? CofferError)?.message, "not authorized")
                }
            }
            XCTAssertTrue(seen.contains { $0.action == .createTable && $0.first == "t" && $0.database == "main" })
            XCTAssertTrue(seen.contains { $0.action == .function && $0.second == "length" })
            XCTAssertTrue(seen.contains { $0.action == .attach })
            // Removed after the body: ATTACH runs again.
            try connection.execute(sql: "ATTACH ':memory:' AS other")
        }
    }
}
