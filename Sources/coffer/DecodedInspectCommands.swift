import ArgumentParser
import Coffer
import CofferRepair
import Foundation

// `coffer info` and `coffer verify` for files the linked SQLCipher 3.4.1 cannot open (SQLCipher 1, 2, 4,
// custom settings, raw-key files): answered by the page decoder and the salvage engine. Used when the
// cipher options name such a format, or when no setting was given and the library refuses the key (the
// profile is then detected; a key that fits no profile is still exit 3); `info` also falls back to it
// when the library reports the file damaged.

extension CLIFailure {
    /// Whether `error` is the library's wrong-passphrase refusal, or its refusal of a SQLCipher 4 file.
    static func isWrongPassphrase(_ error: any Error) -> Bool {
        if case CofferError.wrongPassphrase = error { return true }
        // The library recognised a format it cannot read (a SQLCipher 4 file): the page decoder reads it.
        if case CofferError.notADatabase = error { return true }
        return false
    }
}

extension InfoCommand {
    func runDecoded() throws {
        let file = try compat.openFile(database, key: key)
        let info: DecodedFileInfo
        do { info = try DecodedInspection.info(file: file) } catch {
            throw CLIFailure(status: .failure, message: "\(database): \(error)")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(info), as: UTF8.self))
            return
        }
        var lines = [
            "file:          \(info.path) (\(info.fileSize) bytes)",
            "pages:         \(info.pageCount) × \(info.pageSize) bytes",
            "user_version:  \(info.userVersion.map(String.init) ?? "unreadable")",
            "cipher:        \(info.cipher) — read by Coffer's page decoder",
        ]
        if info.walFrames > 0 { lines.append("wal:           \(info.walFrames) committed frames") }
        lines.append("tables:        \(info.tables.count)")
        let width = info.tables.keys.map(\.count).max() ?? 0
        for (name, rows) in info.tables.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(rows) rows")
        }
        print(lines.joined(separator: "\n"))
    }
}

extension VerifyCommand {
    func runDecoded() throws {
        let file = try compat.openFile(database, key: key)
        let result: DecodedVerification
        do { result = try DecodedInspection.verify(file: file) } catch {
            throw CLIFailure(status: .failure, message: "\(database): \(error)")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print("cipher:          \(ProfileDetection.describe(file))")
            print("pages:           \(result.pageCount) × \(result.pageSize) bytes")
            let damaged = result.damagedPages.isEmpty ? "none" : result.damagedPages.map(String.init).joined(separator: ", ")
            print("damaged pages:   \(result.pagesAuthenticated ? damaged : "not checkable (no per-page HMAC)")")
            if !result.damagedWALPages.isEmpty {
                print("damaged in WAL:  \(result.damagedWALPages.map(String.init).joined(separator: ", "))")
            }
            let problems = result.structuralProblems
            print("structure:       \(problems.isEmpty ? "ok" : problems.joined(separator: "\n                 "))")
        }
        if !result.isClean { throw CLIFailure(status: .failure, message: "\(database) is damaged") }
    }
}
