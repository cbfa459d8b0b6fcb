import Foundation

/// Key bytes that are zeroed when the last reference goes away: the one type every layer keeps a secret in.
///
/// A passphrase's bytes, a derived page key, the HMAC key and SQLCipher's key specification all live in
/// these from the moment Coffer holds them (``Encryption/bytes``), never in `String`s or arrays it cannot wipe.
package final class SecureBytes: @unchecked Sendable {
    // Written only in init and deinit: safe to share.
    private var storage: [UInt8]

    package init(_ bytes: [UInt8]) { storage = bytes }

    package init<S: Sequence>(consuming sequence: S) where S.Element == UInt8 {
        storage = Array(sequence)
    }

    deinit { Self.wipe(&storage) }

    package var count: Int { storage.count }

    /// Runs `body` over the bytes in place; it throws what `body` throws, typed.
    package func withUnsafeBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        let result: Result<T, E> = storage.withUnsafeBytes { buffer in
            do throws(E) { return .success(try body(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Overwrites `bytes` with zeros in place (the optimizer may not drop a write through memset_s-like
    /// volatile access; `withUnsafeMutableBytes` + `resetBytes` keeps the write observable).
    package static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            memset(base, 0, buffer.count)
        }
        bytes.removeAll()
    }

    /// SQLCipher's raw-key specification `x'<64 hex key>'`, or `x'<64 hex key><32 hex salt>'` with a salt.
    package static func rawKeySpec(key: SecureBytes, salt: [UInt8]?) -> SecureBytes {
        let digits = Array("0123456789abcdef".utf8)
        var spec: [UInt8] = [UInt8(ascii: "x"), UInt8(ascii: "'")]
        spec.reserveCapacity(3 + 2 * (key.count + (salt?.count ?? 0)))
        func appendHex(_ byte: UInt8) {
            spec.append(digits[Int(byte >> 4)])
            spec.append(digits[Int(byte & 0x0f)])
        }
        key.withUnsafeBytes { $0.forEach(appendHex) }
        salt?.forEach(appendHex)
        spec.append(UInt8(ascii: "'"))
        defer { wipe(&spec) }
        return SecureBytes(spec)
    }
}
