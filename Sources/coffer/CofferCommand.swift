import ArgumentParser
import Foundation

/// `coffer`: the operator's command line for Coffer databases.
///
/// Exit codes, for every subcommand: 0 success, 1 the work ran but found damage or failed, 2 usage
/// error, 3 wrong passphrase.
@main
struct CofferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "Encrypted, crash-resilient SQLite databases: inspect, demo, back up and repair.",
        discussion: "Exit codes: 0 success, 1 failure or damage found, 2 usage error, 3 wrong passphrase.",
        subcommands: [
            InfoCommand.self, VerifyCommand.self, RepairCommand.self, MigrateCommand.self, BackupCommand.self,
            RestoreCommand.self, StatsCommand.self, VacuumCommand.self,
            DemoCommand.self,
        ])

    /// Parses, runs, and maps every failure onto the documented exit codes (ArgumentParser alone would
    /// use 64 for usage errors).
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let failure as CLIFailure {
            FileHandle.standardError.write(Data("coffer: \(failure.message)\n".utf8))
            Foundation.exit(failure.status.rawValue)
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                print(message)
                Foundation.exit(0)
            }
            FileHandle.standardError.write(Data((message.isEmpty ? "\(error)" : message).utf8 + [10]))
            let isUsage = code == .validationFailure || error is ValidationError || error is CleanExit
            Foundation.exit(isUsage ? ExitStatus.usage.rawValue : ExitStatus.failure.rawValue)
        }
    }
}

/// The documented exit statuses.
enum ExitStatus: Int32 {
    case success = 0
    case failure = 1
    case usage = 2
    case wrongPassphrase = 3
}

/// An error the CLI reports with a chosen status and message.
struct CLIFailure: Error {
    let status: ExitStatus
    let message: String
}
