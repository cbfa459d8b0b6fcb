import ArgumentParser
import Coffer
import Foundation

/// How every subcommand takes the key and cipher options. Keys never go on the command line, where
/// `ps` would show them: a file, an environment variable, or a no-echo prompt on a terminal.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("passphrase-file"), help: "Read the passphrase from this file (one trailing newline is stripped).")
    var passphraseFile: String?

    @Option(name: .customLong("passphrase-env"), help: "Read the passphrase from this environment variable.")
    var passphraseEnv: String?

    @Flag(name: .customLong("prompt"), help: "Prompt for the passphrase on the terminal (no echo).")
    var prompt = false

    @Option(name: .customLong("page-size"), help: "Cipher page size in bytes (default 4096; repair detects it).")
    var pageSize: Int?

    @Option(
        name: .customLong("kdf-iter"),
        help:
            "PBKDF2-HMAC-SHA1 iterations, as SQLCipher 3's kdf_iter (default: Coffer's PBKDF2-HMAC-SHA512 256000 for new files; detected on existing ones)."
    )
    var kdfIterationsOption: Int?

    func validate() throws {
        if [passphraseFile != nil, passphraseEnv != nil, prompt].filter({ $0 }).count > 1 {
            throw ValidationError("give at most one of --passphrase-file, --passphrase-env, --prompt")
        }
        if let passphraseEnv, ProcessInfo.processInfo.environment[passphraseEnv] == nil {
            throw ValidationError("environment variable \(passphraseEnv) is not set")
        }
        if let pageSize, !(512...65536).contains(pageSize) || pageSize & (pageSize - 1) != 0 {
            throw ValidationError("--page-size must be a power of two from 512 to 65536")
        }
        if let kdfIterationsOption, kdfIterationsOption < 1 { throw ValidationError("--kdf-iter must be at least 1") }
    }

    /// Coffer's defaults, with the page size and SHA-1 rounds given. An existing file is opened with whatever
    /// derivation and page size it was written with (the library detects them).
    var cipher: CipherOptions {
        var options = CipherOptions(pageSize: pageSize ?? CipherOptions().pageSize)
        if let kdfIterationsOption { options.keyDerivation = .pbkdf2SHA1(rounds: kdfIterationsOption) }
        return options
    }

    /// The encryption the options describe; `.none` when no key source was given.
    func encryption() throws -> Encryption {
        if let passphraseFile {
            guard let encryption = Encryption.passphraseFile(atPath: passphraseFile) else {
                throw ValidationError("cannot read passphrase file \(passphraseFile)")
            }
            return encryption
        }
        if let passphraseEnv, let value = ProcessInfo.processInfo.environment[passphraseEnv] {
            return .passphrase(value)
        }
        if prompt {
            guard let value = Terminal.passphrase() else {
                throw ValidationError("--prompt needs a terminal")
            }
            return .passphrase(value)
        }
        return .none
    }

    func configuration() throws -> Configuration {
        Configuration(encryption: try encryption(), cipher: cipher)
    }
}

/// Maps library errors onto the CLI's exit statuses.
extension CLIFailure {
    init(_ error: any Error, opening path: String) {
        switch error {
        case CofferError.wrongPassphrase:
            self.init(
                status: .wrongPassphrase,
                message: "wrong passphrase: \(path) cannot be decrypted with the given key and cipher settings")
        case CofferError.fileNotFound:
            self.init(status: .failure, message: "no such file: \(path)")
        default:
            self.init(status: .failure, message: "\(path): \(error)")
        }
    }
}
