public final class WALOverlay: PageSource {
    public let file: DatabaseFile
    public var pageSize: Int { file.pageSize }
    public var usableSize: Int { file.usableSize }
    public var pageCount: UInt32 { file.pageCount }
    public var framesUsed = 0
    public var framesBad = 0
    public init?(file: DatabaseFile, walPath: String) { return nil }
    public func page(_ pageNumber: UInt32) -> Result<[UInt8], PageFailure> { file.page(pageNumber) }
}
