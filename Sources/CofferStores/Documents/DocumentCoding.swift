import CofferEngine
import CofferRecords
import Foundation

/// `Codable` values to documents and back, through their JSON form: dates as seconds since 1970, data
/// as base64, so both sides agree whatever the value's type.
enum DocumentCoding {
    static func document<Value: Encodable>(from value: Value, store: String, key: String?) throws -> DocumentValue {
        if let document = value as? DocumentValue { return document }
        if let members = value as? Document { return .object(members) }
        do {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .secondsSince1970
            let json = try encoder.encode(value)
            return try JSONDecoder().decode(DocumentValue.self, from: json)
        } catch {
            throw DocumentError(reason: .encodingFailed, store: store, key: key, detail: String(describing: error))
        }
    }

    static func decode<Value: Decodable>(
        _ type: Value.Type, from document: DocumentValue, store: String, key: String?
    ) throws -> Value {
        if let value = document as? Value { return value }
        if Value.self == Document.self, let members = document.objectValue as? Value { return members }
        do {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .secondsSince1970
            let json = try encoder.encode(document)
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            return try decoder.decode(Value.self, from: json)
        } catch {
            throw DocumentError(reason: .decodingFailed, store: store, key: key, detail: String(describing: error))
        }
    }
}
