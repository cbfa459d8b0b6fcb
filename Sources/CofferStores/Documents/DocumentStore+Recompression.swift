import CofferEngine
import CofferRecords

// The background pass over a store's stored bodies: the document side of `Database.recompress(_:batchSize:)`.

extension DocumentStore {
    /// Brings the bodies already stored in line with ``bodyCompression``, in batches of `batchSize`
    /// documents (each its own write transaction, in the order documents were first put). Returns the
    /// number of documents rewritten (0 when the store declares no compression).
    ///
    /// Bodies written before the compression was declared are compressed, bodies compressed with another
    /// dictionary are recompressed with the one declared now, and with `.off` every body is stored plain
    /// again. Attributes, bags and full-text indexes are not touched; reads see the documents as they were
    /// put throughout. A pass that was stopped (the process killed) resumes after the last batch it
    /// committed, as ``Database/recompress(_:batchSize:)`` does.
    ///
    /// ```swift
    /// let notes = try DocumentStore(database: database, name: "notes", bodyCompression: .zstd)
    /// try notes.recompressBodies()
    /// ```
    @discardableResult
    public func recompressBodies(batchSize: Int = 500) throws -> Int {
        try database.recompressBatches(recompressionPlan(batchSize: batchSize), control: nil)
    }

    /// ``recompressBodies(batchSize:)`` as an `AsyncSequence` of progress events: documents done of the
    /// store's documents, then `.finished` with the number rewritten. Stopping the iteration stops the pass
    /// after its current batch (a later pass resumes there).
    ///
    /// ```swift
    /// for try await event in notes.recompressBodiesWithProgress() {
    ///     if case .progress(let done, let total) = event { print("\(done)/\(total) documents") }
    /// }
    /// ```
    public func recompressBodiesWithProgress(batchSize: Int = 500) -> AsyncThrowingStream<ProgressEvent<Int>, any Error> {
        database.recompressionProgress(Result { try recompressionPlan(batchSize: batchSize) })
    }

    /// The pass that rewrites every `body` as the store writes one now; nil without a compression.
    private func recompressionPlan(batchSize: Int) throws -> RecompressionPlan? {
        guard let stored = bodyCompression?.storedSQL(ColumnCompression.readSQL("body", decompressing: true)) else { return nil }
        return try RecompressionPlan(tableName: "doc:" + name, assignments: [("body", stored)], batchSize: batchSize)
    }
}
