// RepairWriter+VirtualTables — FTS3/FTS4 and R*Tree tables come back as virtual tables, with their data.
//
// - The first shadow table of a virtual table to begin recreates the virtual table from its CREATE VIRTUAL
//   TABLE statement (authorized as that one CREATE, see ``UntrustedCreate``). Its module creates the shadow
//   tables; they are emptied (an R*Tree's module writes an empty root node) and the salvaged shadow rows
//   go in as they were, so the index is the one the app had, byte for byte.
// - At the end, a virtual table none of whose shadow tables was salvaged is created empty, and every FTS
//   table is checked with `INSERT INTO t(t) VALUES('integrity-check')` (unless this SQLite's check fails
//   on intact tables so declared, see ``VirtualTableDescription/integrityCheckWorks``: then the shadow
//   rows are kept as copied). An R*Tree is scanned, and rebuilt from its surviving leaves when nodes are
//   missing (see RTreeRebuild). When the check fails (shadow pages
//   lost, or the content and the index disagree), the index is rebuilt from the salvaged content with
//   'rebuild' (FTS4 with its own or an external content table); a contentless table cannot be rebuilt and
//   is reported.
// - A virtual table whose module the library lacks (fts5, a custom module) is not recreated: its shadow
//   tables are kept as ordinary tables under their own names, and the report says so.

import Coffer

extension RepairWriter {
    /// Recreates `virtual` in OUTPUT (once) and empties the shadow tables its module created, so the
    /// salvaged shadow rows go in as they were. On failure its shadow tables are created as ordinary tables.
    func createVirtualTable(_ virtual: VirtualTableDescription) throws {
        guard virtualTablesTried.insert(virtual.name.lowercased()).inserted else { return }
        do {
            try onWriter { connection in
                try UntrustedCreate(kind: .virtualTable, name: virtual.name, table: virtual.name, sql: virtual.sql)
                    .run(on: connection)
                for shadow in virtual.shadowTables {
                    try connection.execute(sql: "DELETE FROM \(SQLIdentifier.quote(shadow))")
                }
            }
            created.formUnion(virtual.shadowTables)
            outcome.virtualTablesCreated.append(virtual.name)
        } catch let error as CofferError where RepairWriter.outputFailed(error) {
            throw error
        } catch {
            fail(
                kind: "virtual table", name: virtual.name,
                reason: "not created (\(Self.reason(error))); its shadow tables are kept as ordinary tables")
        }
    }

    /// Creates the virtual tables no shadow row reached, reports those whose module is missing, and checks
    /// (or rebuilds) every FTS index.
    func finishVirtualTables(_ schema: Schema) throws {
        // The modules read their shadow tables' layout when they connect (an R*Tree its node size from the
        // root node's length): a rolled-back schema change resets this connection's schema, so each
        // virtual table connects again, to the restored rows.
        if !outcome.virtualTablesCreated.isEmpty {
            try database.writeWithoutTransaction {
                try $0.executeScript("BEGIN; CREATE TABLE coffer_schema_reset(x); ROLLBACK;")
            }
        }
        for virtual in schema.virtualTables {
            guard virtual.isAvailable else {
                outcome.issues.append(
                    SchemaIssue(
                        kind: "virtual table", name: virtual.name,
                        reason:
                            "\(virtual.module) table not creatable in this SQLite (\(virtual.unavailableReason)): its shadow tables are kept as ordinary tables"
                    ))
                continue
            }
            try createVirtualTable(virtual)
            guard outcome.virtualTablesCreated.contains(virtual.name) else { continue }
            if ["fts3", "fts4"].contains(virtual.module), virtual.integrityCheckWorks { try checkFullText(virtual) }
            if ["rtree", "rtree_i32"].contains(virtual.module) { try checkRTree(virtual) }
        }
    }

    /// Runs FTS's integrity-check on `virtual`; rebuilds the index from the content when it reports
    /// corruption. A table the check cannot read (contentless) is kept as copied.
    private func checkFullText(_ virtual: VirtualTableDescription) throws {
        guard case .corrupt(let detail) = try integrityCheck(virtual) else { return }
        do {
            let name = SQLIdentifier.quote(virtual.name)
            try database.write { try $0.execute(sql: "INSERT INTO \(name)(\(name)) VALUES('rebuild')") }
        } catch let error as CofferError where RepairWriter.outputFailed(error) {
            throw error
        } catch {
            fail(
                kind: "virtual table", name: virtual.name,
                reason: "full-text index failed its integrity-check (\(detail)) and cannot be rebuilt (\(Self.reason(error)))")
            return
        }
        // SQLite 3.15's check also fails on an intact table declared order=DESC: say so if it still fails.
        let after =
            try integrityCheck(virtual) == .passed
            ? "" : "; the check still fails on the rebuilt index (this SQLite cannot check it)"
        outcome.issues.append(
            SchemaIssue(
                kind: "virtual table", name: virtual.name,
                reason: "full-text index failed its integrity-check; rebuilt from the salvaged content\(after)"))
    }

    private enum FullTextCheck: Equatable {
        case passed, unsupported
        case corrupt(String)
    }

    private func integrityCheck(_ virtual: VirtualTableDescription) throws -> FullTextCheck {
        let name = SQLIdentifier.quote(virtual.name)
        do {
            try database.write { try $0.execute(sql: "INSERT INTO \(name)(\(name)) VALUES('integrity-check')") }
            return .passed
        } catch let error as CofferError where RepairWriter.outputFailed(error) {
            throw error
        } catch let error as CofferError where error.code.primary == .corrupt {
            return .corrupt(error.message)
        } catch {
            return .unsupported
        }
    }
}
