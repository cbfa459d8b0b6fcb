import CofferEngine
import CofferRecords

// The background pass over a store's stored values: the key-value side of `Database.recompress(_:batchSize:)`.

extension KeyValueStore {
    /// Brings the values already stored in line with ``Configuration/valueCompression``, in batches of
    /// `batchSize` items (each its own write transaction, in the order items were first put). Returns the
    /// number of items rewritten (0 when the store declares no compression).
    ///
    /// Values put before the compression was declared are compressed, values compressed with another
    /// dictionary are recompressed with the one declared now, and with `.off` every value is stored plain
    /// again. Reads see the values as they were put throughout. A pass that was stopped (the process killed)
    /// resumes after the last batch it committed, as ``Database/recompress(_:batchSize:)`` does.
    ///
    /// ```swift
    /// let inbox = try KeyValueStore(database: database, name: "inbox", configuration: .init(valueCompression: .zstd))
    /// try inbox.recompressValues()
    /// ```
    @discardableResult
    public func recompressValues(batchSize: Int = 500) throws -> Int {
        try database.recompressBatches(recompressionPlan(batchSize: batchSize), control: nil)
    }

    /// ``recompressValues(batchSize:)`` as an `AsyncSequence` of progress events: items done of the store's
    /// items, then `.finished` with the number rewritten. Stopping the iteration stops the pass after its
    /// current batch (a later pass resumes there).
    ///
    /// ```swift
    /// for try await event in inbox.recompressValuesWithProgress() {
    ///     if case .progress(let done, let total) = event { print("\(done)/\(total) values") }
    /// }
    /// ```
    public func recompressValuesWithProgress(batchSize: Int = 500) -> AsyncThrowingStream<ProgressEvent<Int>, any Error> {
        database.recompressionProgress(Result { try recompressionPlan(batchSize: batchSize) })
    }

    /// The pass that rewrites every `value` as the store writes one now; nil without a compression.
    private func recompressionPlan(batchSize: Int) throws -> RecompressionPlan? {
        guard let stored = configuration.valueCompression?.storedSQL(ColumnCompression.readSQL("value", decompressing: true))
        else { return nil }
        return try RecompressionPlan(tableName: "kv:" + name, assignments: [("value", stored)], batchSize: batchSize)
    }
}
