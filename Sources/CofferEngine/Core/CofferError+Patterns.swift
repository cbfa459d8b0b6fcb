// `catch CofferError.constraint { … }`: one pattern per ``ResultCode``, so every code the documentation
// names can be matched by name in a `catch` clause (`CofferErrorPatternTests` uses each one).

extension CofferError {
    /// Matches ``ResultCode/error`` and every extended code of its family.
    public static let error = ResultCode.error
    /// Matches ``ResultCode/internal`` and every extended code of its family.
    public static let `internal` = ResultCode.`internal`
    /// Matches ``ResultCode/permission`` and every extended code of its family.
    public static let permission = ResultCode.permission
    /// Matches ``ResultCode/abort`` and every extended code of its family.
    public static let abort = ResultCode.abort
    /// Matches ``ResultCode/busy`` and every extended code of its family.
    public static let busy = ResultCode.busy
    /// Matches ``ResultCode/locked`` and every extended code of its family.
    public static let locked = ResultCode.locked
    /// Matches ``ResultCode/noMemory`` and every extended code of its family.
    public static let noMemory = ResultCode.noMemory
    /// Matches ``ResultCode/readOnly`` and every extended code of its family.
    public static let readOnly = ResultCode.readOnly
    /// Matches ``ResultCode/interrupt`` and every extended code of its family.
    public static let interrupt = ResultCode.interrupt
    /// Matches ``ResultCode/ioError`` and every extended code of its family.
    public static let ioError = ResultCode.ioError
    /// Matches ``ResultCode/corrupt`` and every extended code of its family.
    public static let corrupt = ResultCode.corrupt
    /// Matches ``ResultCode/full`` and every extended code of its family.
    public static let full = ResultCode.full
    /// Matches ``ResultCode/cantOpen`` and every extended code of its family.
    public static let cantOpen = ResultCode.cantOpen
    /// Matches ``ResultCode/schema`` and every extended code of its family.
    public static let schema = ResultCode.schema
    /// Matches ``ResultCode/tooBig`` and every extended code of its family.
    public static let tooBig = ResultCode.tooBig
    /// Matches ``ResultCode/constraint`` and every extended code of its family.
    public static let constraint = ResultCode.constraint
    /// Matches ``ResultCode/mismatch`` and every extended code of its family.
    public static let mismatch = ResultCode.mismatch
    /// Matches ``ResultCode/misuse`` and every extended code of its family.
    public static let misuse = ResultCode.misuse
    /// Matches ``ResultCode/range`` and every extended code of its family.
    public static let range = ResultCode.range
    /// Matches ``ResultCode/notADatabase`` and every extended code of its family.
    public static let notADatabase = ResultCode.notADatabase
    /// Matches ``ResultCode/constraintUnique``.
    public static let constraintUnique = ResultCode.constraintUnique
    /// Matches ``ResultCode/constraintPrimaryKey``.
    public static let constraintPrimaryKey = ResultCode.constraintPrimaryKey
    /// Matches ``ResultCode/constraintNotNull``.
    public static let constraintNotNull = ResultCode.constraintNotNull
    /// Matches ``ResultCode/constraintForeignKey``.
    public static let constraintForeignKey = ResultCode.constraintForeignKey
    /// Matches ``ResultCode/constraintCheck``.
    public static let constraintCheck = ResultCode.constraintCheck
    /// Matches ``ResultCode/wrongPassphrase``.
    public static let wrongPassphrase = ResultCode.wrongPassphrase
    /// Matches ``ResultCode/conversionFailed``.
    public static let conversionFailed = ResultCode.conversionFailed
    /// Matches ``ResultCode/apiMisuse``.
    public static let apiMisuse = ResultCode.apiMisuse
    /// Matches ``ResultCode/invalidConfiguration``.
    public static let invalidConfiguration = ResultCode.invalidConfiguration
    /// Matches ``ResultCode/fileNotFound``.
    public static let fileNotFound = ResultCode.fileNotFound
    /// Matches ``ResultCode/compressionFailed``.
    public static let compressionFailed = ResultCode.compressionFailed
    /// Matches ``ResultCode/unsupportedByLibrary``.
    public static let unsupportedByLibrary = ResultCode.unsupportedByLibrary
}
