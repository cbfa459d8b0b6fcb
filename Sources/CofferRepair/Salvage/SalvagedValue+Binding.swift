// SalvagedValue+Binding — salvaged values bind to OUTPUT's INSERT in place, through the same recursion
// as Coffer's own rows (`Statement.bindInPlace`): TEXT and BLOB from the salvaged bytes, byte for byte
// (text that is not UTF-8 included), with no copy into SQLite.

import Coffer
import CofferFormat

extension SalvagedValue: BytesLendingValue {
    /// Binds NULL, INTEGER and REAL; leaves TEXT and BLOB (empty ones too) to
    /// ``withBytesBound(to:at:_:)``.
    @usableFromInline
    package func bindWithoutLending(to statement: Statement, at position: Int32) throws -> Bool {
        switch self {
        case .null: try statement.bind(.null, toParameter: Int(position))
        case .integer(let number): try statement.bind(.integer(number), toParameter: Int(position))
        case .real(let number): try statement.bind(.real(number), toParameter: Int(position))
        case .text, .blob: return false
        }
        return true
    }

    /// Binds the TEXT or BLOB bytes in place (an empty value is bound empty, never NULL) while `body` runs.
    @usableFromInline
    package func withBytesBound<T>(to statement: Statement, at position: Int32, _ body: () throws -> T) throws -> T {
        switch self {
        case .text(let bytes), .blob(let bytes):
            let isBlob = if case .blob = self { true } else { false }
            return try bytes.withUnsafeBytes { buffer in
                try statement.bindInPlace(buffer, isBlob: isBlob, toParameter: Int(position))
                return try body()
            }
        case .null, .integer, .real:
            _ = try bindWithoutLending(to: statement, at: position)
            return try body()
        }
    }
}
