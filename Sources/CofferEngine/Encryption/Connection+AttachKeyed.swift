// Connection+AttachKeyed — attaching another database file under a key spec, as export and vacuum do.

import CSQLCipher

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

extension Connection {
    /// Attaches the encrypted file at `path` (user input: bound, never spliced) as `schema` under `fileKey`.
    /// SQLCipher reads the file's schema as it attaches it, with its process-wide defaults, so those are the
    /// file's format for the moment (see CipherDefaults).
    package func attach(_ path: String, as schema: String, fileKey: AttachedFileKey) throws {
        try CipherDefaults.with(
            format: fileKey.format, pageSize: fileKey.pageSize, usesHMAC: fileKey.usesHMAC, on: self
        ) {
            try attach(path, as: schema, keySpec: SecureBytes.rawKeySpec(key: fileKey.pageKey, salt: nil))
        }
    }

    /// Keys this connection's main database — a file opened with `Connection(path:flags:)`, not read yet —
    /// with `fileKey`, and reads its schema so a wrong key fails here.
    package func key(with fileKey: AttachedFileKey) throws {
        let spec = SecureBytes.rawKeySpec(key: fileKey.pageKey, salt: nil)
        let code = spec.withUnsafeBytes { sqlite3_key(handle, $0.baseAddress, Int32($0.count)) }
        guard code == SQLITE_OK else { throw failure(code: code, sql: nil) }
        try executeScript(fileKey.pageFormatPragmas.joined(separator: "; "))
        _ = try fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master")
    }
}
