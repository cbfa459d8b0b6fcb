// GeneratorValue — a typed value of the realistic-corpus generator's ground truth JSON
// (Tools/corpus/make_app_databases.py): ["n"], ["i", int], ["r", "repr"], ["t", text], ["b", hex].

import Foundation

/// A value of the generator's ground truth, decoded from its tagged JSON array.
public enum GeneratorValue: Decodable, Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        let tag = try container.decode(String.self)
        switch tag {
        case "i": self = .integer(try container.decode(Int64.self))
        case "r": self = .real(Double(try container.decode(String.self)) ?? .nan)
        case "t": self = .text(try container.decode(String.self))
        case "b":
            let hex = Array(try container.decode(String.self).utf8)
            self = .blob(
                stride(from: 0, to: hex.count - 1, by: 2).map {
                    UInt8(String(decoding: hex[$0..<($0 + 2)], as: UTF8.self), radix: 16) ?? 0
                })
        default: self = .null
        }
    }
}
