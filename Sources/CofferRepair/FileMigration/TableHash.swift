// TableHash — the order-independent hash of a table's rows that checks a migration (see FileMigration.swift).

import Coffer
import Crypto
import Foundation

/// An order-independent hash of a table's rows.
struct TableHash: Sendable {
    private(set) var rows = 0
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    mutating func add(rowid: Int64?, values: [SalvagedValue]) {
        var hasher = SHA256()
        var buffer: [UInt8] = []
        func append(_ number: UInt64) {
            for shift in stride(from: 56, through: 0, by: -8) {
                buffer.append(UInt8(truncatingIfNeeded: number >> UInt64(shift)))
            }
        }
        if let rowid {
            buffer.append(0x52)
            append(UInt64(bitPattern: rowid))
        }
        for value in values {
            switch value {
            case .null: buffer.append(0)
            case .integer(let number):
                buffer.append(1)
                append(UInt64(bitPattern: number))
            case .real(let number):
                buffer.append(2)
                append(number.bitPattern)
            case .text(let bytes):
                buffer.append(3)
                append(UInt64(bytes.count))
                buffer += bytes
            case .blob(let bytes):
                buffer.append(4)
                append(UInt64(bytes.count))
                buffer += bytes
            }
        }
        hasher.update(data: buffer)
        let digest = Array(hasher.finalize())
        func word(_ index: Int) -> UInt64 {
            digest[(index * 8)..<(index * 8 + 8)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        words = (words.0 &+ word(0), words.1 &+ word(1), words.2 &+ word(2), words.3 &+ word(3))
        rows += 1
    }

    var hex: String {
        [words.0, words.1, words.2, words.3].map { String(format: "%016llx", $0) }.joined()
    }
}

/// Column `column` of the current row as the salvage engine represents it: TEXT and BLOB as their bytes.
func salvagedValue(_ statement: Statement, at column: Int) -> SalvagedValue {
    switch statement.value(at: column) {
    case .null: return .null
    case .integer(let number): return .integer(number)
    case .real(let number): return .real(number)
    case .text: return .text(statement.bytes(at: column))
    case .blob: return .blob(statement.bytes(at: column))
    }
}
