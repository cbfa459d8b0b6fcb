import InMemoryLogging
import Logging

extension InMemoryLogHandler {
    /// A logger that records every event at `level` or above in this handler's ``entries``, from any thread.
    ///
    /// ```swift
    /// let log = InMemoryLogHandler()
    /// configuration.logger = log.logger(level: .warning)
    /// // … open, write …
    /// XCTAssertTrue(log.entries.contains { $0.message == "slow statement" })
    /// ```
    public func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "coffer-test") { _ in self }
        logger.logLevel = level
        return logger
    }
}
