import Foundation

/// A test's number that a run can change from the environment (rounds, seeds, sizes), so a failure found
/// with one seed or a longer run can be replayed.
///
/// ```swift
/// let seed: UInt64 = TestKnob.value("COFFER_KILL_SEED", default: 20_261_122)
/// ```
public enum TestKnob {
    /// The environment variable `name` read as a `Value`, or `default` when it is unset or unreadable.
    public static func value<Value: LosslessStringConvertible>(_ name: String, default value: Value) -> Value {
        ProcessInfo.processInfo.environment[name].flatMap(Value.init) ?? value
    }
}
