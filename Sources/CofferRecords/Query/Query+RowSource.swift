// A query driven by a row source: another statement's rowids, read first, each row of the table then
// looked up by rowid (a full-text index's hits, for `matching(_:)`).
//
// As a filter, `rowid IN (SELECT …)`, SQLite runs the subquery to its end and keeps every rowid before
// reading the first row, so a 50-row page of a word found in 20,000 rows costs 20,000 rowids. As the
// left side of a CROSS JOIN, the source's cursor drives the loop and a LIMIT stops it. CROSS JOIN, not
// JOIN: SQLite then keeps that order, where a plain join lets the planner scan an index of the table
// first and run the source once per row (a full-text MATCH per row when the query also filters an
// indexed column). The source names its column `rowid`, so an unqualified `rowid` in the query's own
// SQL still names one column (the same value, since the join matches them).

import CofferEngine

extension Query {
    /// This query restricted to the rows whose rowids `rowids` (a `SELECT … AS rowid …` returning each
    /// at most once) returns, read in its order. A query has one source; a second is a filter.
    package func driven(by rowids: SQLFragment) -> Query {
        var query = self
        if rowSource == nil {
            query.rowSource = rowids
        } else {
            query.filters.append(Self.rowid(in: rowids, negated: false))
        }
        return query
    }

    /// What `FROM` reads: the table, or the row source CROSS JOIN the table on rowid.
    ///
    /// Joined on rowid, the table is named `main."T"`: while a live migration's union view hides `T`, a
    /// view's rowid is no row's (SQLite numbers a compound view's rows as it reads them), and the rows a
    /// source's rowids name — a full-text index's hits — are the table's own rows anyway (the index holds
    /// nothing else; source rows still to move are not indexed yet).
    var source: SQLFragment {
        guard let rowSource else { return Self.table }
        return SQLFragment(raw: "(") + rowSource + SQLFragment(raw: ") AS coffer_rows CROSS JOIN main.") + Self.table
            + SQLFragment(raw: " ON ") + Self.qualifiedRowid + SQLFragment(raw: " = coffer_rows.rowid")
    }

    /// The filters, with the row source as one more (`rowid IN (…)`): for statements that cannot join
    /// (UPDATE, DELETE) or that read another source first.
    package var wholeRowFilters: [SQLFragment] {
        guard let rowSource else { return filters }
        return filters + [Self.rowid(in: rowSource, negated: false)]
    }

    /// `"table".rowid [NOT] IN (rowids)`.
    package static func rowid(in rowids: SQLFragment, negated: Bool) -> SQLFragment {
        qualifiedRowid + SQLFragment(raw: negated ? " NOT IN (" : " IN (") + rowids + SQLFragment(raw: ")")
    }

    /// `"T".rowid`, or `"T"."key"` for a table whose one key column is its `INTEGER PRIMARY KEY` (the
    /// rowid under its own name, read by the same b-tree search): a live migration's union view has that
    /// column, where its rowid is no row's. (Other rowid tables have no such name; a `rowid IN (…)` filter
    /// over their union view is wrong while they migrate, see <doc:LiveMigration>.)
    static var qualifiedRowid: SQLFragment {
        if let key = Root.integerPrimaryKeyColumn {
            return SQLFragment([.column(table: Root.tableName, name: key)])
        }
        return SQLFragment([.identifier(Root.tableName), .raw(".rowid")])
    }
}
