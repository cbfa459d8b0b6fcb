import CofferEngine

/// A statement's `EXPLAIN` listing (SQLite's bytecode), read for what ``ReadRegionRecorder`` needs: which
/// b-trees the program opens and how it positions each table cursor.
///
/// The reading is conservative: anything not understood makes the table's rows (or the whole region)
/// count as all.
struct VirtualMachineProgram {
    struct Operation {
        var opcode: String
        var p1: Int64
        var p2: Int64
        var p3: Int64
        var p4: String?
        var p5: Int64
    }

    /// How a table cursor reaches its rows.
    enum RowAccess: Equatable {
        /// Only by these rowids, constants in the program.
        case rowIDs(Set<Int64>)
        /// By rowid, from a bound parameter (its value is not in the program).
        case byParameter
        /// By scanning, through an index, or in a way not understood.
        case any
    }

    private(set) var operations: [Operation] = []

    /// Appends one row of `EXPLAIN`'s output (addr, opcode, p1, p2, p3, p4, p5, comment).
    mutating func append(_ row: Row) {
        func integer(_ index: Int) -> Int64 {
            if case .integer(let value) = row[index] { return value }
            return -1
        }
        let opcode: String
        if case .text(let text) = row[1] { opcode = text } else { opcode = "" }
        var p4: String?
        switch row[5] {
        case .text(let text): p4 = text
        case .integer(let value): p4 = String(value)
        default: p4 = nil
        }
        // SQLite 3.15 lists P5 as two hex digits.
        var p5: Int64 = -1
        switch row[6] {
        case .integer(let value): p5 = value
        case .text(let text): p5 = Int64(text, radix: 16) ?? -1
        default: break
        }
        operations.append(Operation(opcode: opcode, p1: integer(2), p2: integer(3), p3: integer(4), p4: p4, p5: p5))
    }

    /// The root pages each cursor opens in `main`; nil when a cursor opens a b-tree of another schema
    /// (TEMP, attached) or one whose root is computed at run time.
    func cursorRoots() -> [Int64: Set<Int64>]? {
        var roots: [Int64: Set<Int64>] = [:]
        for operation in operations where Self.opens.contains(operation.opcode) {
            // P3 is the schema (0 = main); P5 flag 0x02 means P2 is a register, not a root page.
            guard operation.p3 == 0, operation.p5 & 0x02 == 0 else { return nil }
            roots[operation.p1, default: []].insert(operation.p2)
        }
        return roots
    }

    /// How `cursor` (a table cursor) is positioned.
    func rowAccess(of cursor: Int64) -> RowAccess {
        var ids: Set<Int64> = []
        var byParameter = false
        for (address, operation) in operations.enumerated() {
            // `Seek` positions its P3 table cursor on the row an index cursor found.
            if operation.opcode == "Seek" && operation.p3 == cursor { return .any }
            guard operation.p1 == cursor, !Self.notCursorInP1.contains(operation.opcode) else { continue }
            if Self.readsCurrentRow.contains(operation.opcode) { continue }
            guard operation.opcode == "SeekRowid" || operation.opcode == "NotExists" else { return .any }
            switch constantKey(register: operation.p3, before: address) {
            case .some(.some(let id)): ids.insert(id)
            case .some(.none): byParameter = true
            case .none: return .any
            }
        }
        return byParameter ? .byParameter : .rowIDs(ids)
    }

    /// The value the operations just before `address` load into `register`: `.some(id)` for a constant,
    /// `.some(nil)` for a bound parameter, nil for anything else.
    private func constantKey(register: Int64, before address: Int) -> Int64?? {
        var index = address - 1
        // Affinity checks on the same register may sit between the load and the seek.
        while index >= 0, ["MustBeInt", "IsNull", "NotNull"].contains(operations[index].opcode), operations[index].p1 == register
        {
            index -= 1
        }
        guard index >= 0 else { return nil }
        let loader = operations[index]
        guard loader.p2 == register else { return nil }
        switch loader.opcode {
        case "Integer": return .some(loader.p1)
        case "Int64": return loader.p4.flatMap { Int64($0) }.map { .some($0) }
        case "Variable": return .some(nil)
        default: return nil
        }
    }

    private static let opens: Set<String> = ["OpenRead", "OpenWrite", "ReopenIdx"]
    /// Operations that read the row a cursor is on without moving it.
    private static let readsCurrentRow: Set<String> = [
        "OpenRead", "OpenWrite", "ReopenIdx", "Column", "Rowid", "Close", "NullRow",
    ]
    /// Operations whose P1 is not a cursor (a value, a register, a flag): they say nothing about one.
    private static let notCursorInP1: Set<String> = [
        "Init", "Goto", "Halt", "HaltIfNull", "Transaction", "TableLock", "Integer", "Int64", "Real", "String8", "String",
        "Null", "SoftNull", "Blob", "Variable", "Move", "Copy", "SCopy", "IntCopy", "ResultRow", "MustBeInt", "IsNull",
        "NotNull", "If", "IfNot", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "Function", "Function0", "AggStep", "AggStep0",
        "AggFinal", "Affinity", "Once", "Gosub", "Return", "Yield", "InitCoroutine", "EndCoroutine", "Add", "Subtract",
        "Multiply", "Divide", "Remainder", "Concat", "BitAnd", "BitOr", "ShiftLeft", "ShiftRight", "Not", "BitNot", "Cast",
        "RealAffinity", "IfPos", "IfNotZero", "DecrJumpZero", "Jump", "Noop", "Explain", "Trace", "CollSeq", "Compare",
        "Permutation", "MakeRecord", "AddImm", "And", "Or", "IsTrue", "OffsetLimit", "MemMax", "Param", "Program",
        "FkCounter", "FkIfZero", "ElseNotEq", "CursorHint",
    ]
}
