// RowidSet — the rowids already salvaged into one table, for duplicate resolution.
//
// A tree walk meets a table's rowids in increasing order, so they are kept as sorted runs of consecutive
// values [first, last]: appending the next rowid extends the last run or starts a new one, with no hashing.
// Memory then grows with the number of gaps between rowids, not with the number of rows (one run for a
// table that never lost a row; a Set<Int64> of 700,000 rowids took about 20 MB and a tenth of the salvage
// thread's time). Rowids that arrive out of order (orphan leaves, a damaged tree) go to an ordinary set.

struct RowidSet {
    /// Sorted, disjoint, non-adjacent runs of rowids.
    private var runs: [(first: Int64, last: Int64)] = []
    /// Rowids that arrived at or below the end of the last run and are in no run. Each is below that end,
    /// and runs only grow upwards, so a rowid above the last run is never in here.
    private var scattered = Set<Int64>()

    /// Inserts `rowid`; false when it was already there.
    mutating func insert(_ rowid: Int64) -> Bool {
        guard let last = runs.last else {
            runs.append((rowid, rowid))
            return true
        }
        if rowid > last.last {
            if rowid == last.last &+ 1 {
                runs[runs.count - 1].last = rowid
            } else {
                runs.append((rowid, rowid))
            }
            return true
        }
        if inRuns(rowid) { return false }
        return scattered.insert(rowid).inserted
    }

    /// Whether `rowid` was inserted.
    func contains(_ rowid: Int64) -> Bool {
        inRuns(rowid) || scattered.contains(rowid)
    }

    /// Binary search of the runs.
    private func inRuns(_ rowid: Int64) -> Bool {
        var low = 0
        var high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].last < rowid {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low < runs.count && runs[low].first <= rowid
    }
}
