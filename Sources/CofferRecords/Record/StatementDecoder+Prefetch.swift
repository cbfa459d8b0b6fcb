import CofferEngine

extension StatementDecoder {
    /// Rows a fetch decodes in place before it reads ahead on a second thread: a short fetch never pays
    /// for the hand-over.
    static let rowsBeforePrefetch = 64

    /// Every remaining row of `statement` as a `Record`, the statement stepped on a second thread past the
    /// first ``rowsBeforePrefetch`` rows.
    ///
    /// A compressed column's fetch costs in stepping (SQLite reads and decrypts the pages) and in zstd. A
    /// ``RowPrefetcher`` steps on the other core, copies the rows (the select list's `coffer_column`
    /// handing stored values over untouched meanwhile), and shares the zstd work with this thread, which
    /// decodes each copied row exactly as it decodes the statement's own: the readers read the current
    /// row of the prefetcher's in-memory statement instead (``handle``). Records come out in the
    /// statement's order; an error, a step's or a decode's, ends the fetch as it would in place, after the
    /// second thread has let go.
    static func prefetchedRecords<Record: TableRecord>(_ type: Record.Type, from statement: Statement) throws -> [Record] {
        let records = RecordBuffer<Record>()
        let decoder = forRecord(type, on: statement)
        for _ in 0..<rowsBeforePrefetch {
            guard try statement.step() else { return records.takeArray() }
            records.append(try decoder.record(type))
        }
        let compressed = Record.columnDefinitions.indices.filter { Record.columnDefinitions[$0].compression != nil }
        guard let prefetcher = RowPrefetcher(statement: statement, compressedColumns: compressed) else {
            try append(type, from: statement, to: records) { _ in }
            return records.takeArray()
        }
        prefetcher.start()
        defer {
            decoder.handle = statement.handle
            prefetcher.stop()
        }
        // The readers read each copied row from the prefetcher's in-memory statement.
        decoder.handle = prefetcher.rowHandle
        while let batch = try prefetcher.next() {
            for row in 0..<batch.rows {
                try prefetcher.moveToRow(row, in: batch)
                records.append(try decoder.record(type))
            }
        }
        return records.takeArray()
    }
}
