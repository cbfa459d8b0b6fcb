import CofferEngine
import CofferRecords

/// A typed setting: its name in the store and the value read while none is stored.
///
/// Declare keys as static members so call sites read `settings[.theme]`:
///
/// ```swift
/// enum Theme: String, Codable, Sendable { case light, dark }
/// extension SettingsKey where Value == Theme {
///     static var theme: SettingsKey<Theme> { SettingsKey("theme", default: .light) }
/// }
/// try settings.set(.dark, for: .theme)
/// let theme = try settings[.theme]
/// ```
public struct SettingsKey<Value: Codable & Sendable>: Sendable {
    /// The setting's name in the store.
    public let name: String
    /// What reading the setting returns while nothing is stored for it (and no default is registered).
    public let defaultValue: Value

    /// A key called `name` whose value is `defaultValue` until set.
    public init(_ name: String, default defaultValue: Value) {
        self.name = name
        self.defaultValue = defaultValue
    }
}

/// A change made through a ``SettingsStore``.
public struct SettingsChange: Sendable, Equatable {
    /// The setting's name.
    public let name: String
    /// The stored value after the change, or nil when the setting was removed (it reads its default again).
    public let newValue: DocumentValue?

    /// A change of `name` to `newValue` (nil: removed).
    public init(name: String, newValue: DocumentValue?) {
        self.name = name
        self.newValue = newValue
    }
}
