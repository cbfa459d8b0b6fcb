// Connection+AttachKeyed — attaching another database file under a key spec, as export and vacuum do.

extension Connection {
    /// Attaches `path` as `schema` (an identifier of Coffer's own, not user input) under `keySpec`, bound
    /// as a parameter so the key never appears in SQL text; nil attaches it as plaintext (SQLCipher's
    /// empty key).
    package func attach(_ path: String, as schema: String, keySpec: SecureBytes?) throws {
        let attach = try makeStatement(sql: "ATTACH DATABASE ? AS \(schema) KEY ?")
        try attach.bind(.text(path), toParameter: 1)
        if let keySpec {
            try keySpec.withUnsafeBytes { try attach.bindText(bytes: $0, toParameter: 2) }
        } else {
            try attach.bind(.text(""), toParameter: 2)
        }
        _ = try attach.step()
    }
}
