import CofferEngine

/// Added to an insert's purpose for the statement that binds values compressed ahead (no
/// `coffer_compress` in its SQL).
private let compressedAheadStatementPurpose = 16

/// Records in the first chunk of a batch insert with compressed columns, which the writer compresses
/// itself while the second thread takes the next: small, so the writer starts inserting soon.
private let firstChunkRecords = 16

/// Records in each later chunk: enough that handing a chunk over (a queue hop, a condition) is a few
/// percent of compressing it, few enough that the values of three chunks in memory stay small.
private let chunkRecords = 64

/// Chunks handed to the second thread ahead of the one the writer inserts: two, so that it goes on to
/// the next when it finishes one before the writer does.
private let chunksAhead = 2

extension TableRecord {
    /// `insertAll`'s loop for a type with compressed columns, without hooks or a live migration: the
    /// records go in chunks, and while the writer inserts one chunk, the values of the next are
    /// compressed on a second thread (``CompressionAhead``). The stored values are byte for byte those
    /// `coffer_compress` writes, bound to an INSERT that takes them as they are.
    ///
    /// Memory: the column values of at most four chunks (the one being inserted, two ahead, and the one
    /// being read from `records`) and their compressed forms.
    static func insertCompressingAhead(
        _ records: some Sequence<Self>, _ db: Connection, _ resolution: ConflictResolution, _ ahead: CompressionAhead
    ) throws -> [Int64] {
        defer { ahead.finish() }
        let columns = columnDefinitions
        // The compressed columns, in order: their index, and how each row picks its dictionary.
        let compressed = try columns.indices.compactMap { index -> (index: Int, compression: ColumnCompression, picker: Int?)? in
            guard let compression = columns[index].compression else { return nil }
            guard case .dictionaries(let name, _, _) = compression else { return (index, compression, nil) }
            guard let picker = columns.firstIndex(where: { $0.name == name }) else {
                throw CofferError(
                    code: .apiMisuse,
                    message: "\(tableName).\(columns[index].name) picks its dictionary by a column \(name) it does not have")
            }
            return (index, compression, picker)
        }
        let statement = try db.recordStatement(
            for: Self.self, purpose: compressedAheadStatementPurpose + resolution.statementPurpose
        ) {
            try insertSQL(resolution, compressedAhead: true)
        }
        defer {
            statement.reset()
            statement.isInUse = false
        }
        var iterator = records.makeIterator()
        func nextChunk(_ size: Int, inBackground: Bool) throws -> (rows: [[DatabaseValue]], chunk: CompressedChunk)? {
            var rows: [[DatabaseValue]] = []
            rows.reserveCapacity(size)
            while rows.count < size, let record = iterator.next() { rows.append(try record.columnValues()) }
            guard !rows.isEmpty else { return nil }
            var requests: [CompressionRequest] = []
            requests.reserveCapacity(rows.count * compressed.count)
            for row in rows {
                for column in compressed {
                    let picker = column.picker.map { row[$0] }
                    requests.append(
                        CompressionRequest(
                            value: row[column.index], dictionaryID: column.compression.dictionaryID(picker: picker)))
                }
            }
            return (rows, ahead.submit(requests, inBackground: inBackground))
        }
        var rowIDs: [Int64] = []
        var queued: [(rows: [[DatabaseValue]], chunk: CompressedChunk)] = []
        var exhausted = false
        if let first = try nextChunk(firstChunkRecords, inBackground: false) { queued.append(first) } else { exhausted = true }
        while !queued.isEmpty {
            // Up to `chunksAhead` chunks go to the second thread before this one is compressed or inserted.
            while !exhausted && queued.count <= chunksAhead {
                if let next = try nextChunk(chunkRecords, inBackground: true) { queued.append(next) } else { exhausted = true }
            }
            let (rows, chunk) = queued.removeFirst()
            ahead.complete(chunk)
            for (row, values) in rows.enumerated() {
                defer { statement.resetClearingBindings() }
                var bytesBound = false
                try statement.bindInPlace(values, from: 0, parameter: 1, bytesBound: &bytesBound) {
                    for (position, column) in compressed.enumerated() {
                        guard let stored = chunk.stored(row * compressed.count + position) else { continue }
                        try statement.bindInPlace(stored, isBlob: true, toParameter: column.index + 1)
                    }
                    while try statement.step() {}
                }
                rowIDs.append(db.changesCount > 0 ? db.lastInsertedRowID : 0)
            }
        }
        return rowIDs
    }
}
