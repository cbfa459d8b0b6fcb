// ReachedRanges — the rowid ranges of one table's reached leaves, against which orphan pages are placed.

/// The rowid ranges of the leaves reached for one table.
struct ReachedRanges {
    var ranges: [(low: Int64, high: Int64)] = []
    var pages = Set<UInt32>()

    mutating func add(page: UInt32, low: Int64, high: Int64) {
        ranges.append((low, high))
        pages.insert(page)
    }

    /// Sorts the ranges by their low key. The walker enforces rowid bounds, so the reached leaves of one
    /// table never overlap each other and sorting by low also sorts by high.
    mutating func seal() { ranges.sort { $0.low < $1.low } }

    /// Whether [low, high] overlaps a reached leaf's range (binary search; requires `seal()`).
    func overlaps(low: Int64, high: Int64) -> Bool {
        var lower = 0
        var upper = ranges.count
        while lower < upper {
            let middle = (lower + upper) / 2
            if ranges[middle].high < low { lower = middle + 1 } else { upper = middle }
        }
        return lower < ranges.count && ranges[lower].low <= high
    }
}
