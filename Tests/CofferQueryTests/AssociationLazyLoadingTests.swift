import Dispatch
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

extension Author {
    /// The author's books, loaded lazily the first time they are read in a read or write closure.
    var books: [Book] { get throws { try Author.books.records(of: self) } }
}

extension Book {
    /// The book's author, loaded lazily.
    var author: Author? { get throws { try Book.author.record(of: self) } }
    /// The book's editor (a nullable key), loaded lazily.
    var editor: Author? { get throws { try Book.editor.record(of: self) } }
    static let editor = belongsTo(Author.self, using: editorKey)
}

/// Relationships faulted in: loaded by one statement the first time they are read inside a read or write
/// closure, reused there, reloaded after the closure changes a row, a typed error outside any closure or
/// on another thread, and a value of the snapshot it was read in (statements counted by SQLite's trace).
final class AssociationLazyLoadingTests: XCTestCase {
    func testARelationshipLoadsOnceInAReadWithOneStatement() throws {
        let database = try makeLibraryDatabase()
        let authors = try database.write { try insertLibrary($0, authors: 10) }
        let author = authors[4]
        try database.read { db in
            let (books, statements) = try db.countingStatements { try author.books }
            XCTAssertEqual(statements, 1)
            XCTAssertEqual(books, try Book.filter { $0.authorID == (author.id ?? -1) }.fetchAll(db))
            XCTAssertEqual(books.count, 4)
            let (again, statementsAgain) = try db.countingStatements { try author.books }
            XCTAssertEqual(statementsAgain, 0, "read again in the same closure: no SQL")
            XCTAssertEqual(again, books)
            let (none, emptyStatements) = try db.countingStatements { try authors[5].books }
            XCTAssertEqual(none, [])
            XCTAssertEqual(emptyStatements, 1)
        }
    }

    func testToOneRelationshipsLoadTheirRecordOrNil() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            let authors = try insertLibrary(db, authors: 6)
            let book = try Book.filter { $0.authorID == (authors[3].id ?? -1) }.fetchAll(db)[0]
            XCTAssertEqual(try book.author, authors[3])
            let (editor, statements) = try db.countingStatements { try book.editor }
            XCTAssertEqual(editor, nil)
            XCTAssertEqual(statements, 0, "a NULL key loads nothing")
        }
    }

    func testReadingOutsideAClosureIsATypedError() throws {
        let database = try makeLibraryDatabase()
        let author = try database.write { try insertLibrary($0, authors: 5)[4] }
        assertOutsideAClosure(try author.books)
        // Another thread, while the closure runs on this one, has no connection either.
        try database.read { _ in
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var thrown: Error?
            Thread {
                do { _ = try author.books } catch { thrown = error }
                done.signal()
            }.start()
            done.wait()
            XCTAssertEqual((thrown as? CofferError)?.code, .apiMisuse, "\(String(describing: thrown))")
        }
        // After the closure returned, the thread has none again.
        _ = try database.read { _ in try author.books }
        assertOutsideAClosure(try author.books)
    }

    func testTheLoadedValueBelongsToTheSnapshotItWasReadIn() throws {
        let database = try makeLibraryDatabase()
        let author = try database.write { try insertLibrary($0, authors: 5)[4] }
        guard let authorID = author.id else { return XCTFail("no id") }
        let loaded = DispatchSemaphore(value: 0)
        let committed = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var counts: [Int] = []
        nonisolated(unsafe) var failure: Error?
        let reader = Thread {
            do {
                try database.read { db in
                    counts.append(try author.books.count)
                    loaded.signal()
                    committed.wait()
                    counts.append(try author.books.count)  // the snapshot's, after another commit
                    counts.append(try Book.filter { $0.authorID == authorID }.fetchCount(db))
                }
            } catch { failure = error }
            loaded.signal()
        }
        reader.start()
        loaded.wait()
        try database.write { db in
            var book = Book(id: nil, authorID: authorID, editorID: nil, title: "late", year: 2024)
            try book.insert(db)
        }
        committed.signal()
        loaded.wait()
        XCTAssertNil(failure)
        XCTAssertEqual(counts, [4, 4, 4])
        XCTAssertEqual(try database.read { _ in try author.books.count }, 5, "a new read, a new snapshot")
    }

    func testAWriteReloadsAfterItChangesRowsOrRollsBackASavepoint() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            let author = try insertLibrary(db, authors: 5)[4]
            guard let authorID = author.id else { return XCTFail("no id") }
            XCTAssertEqual(try author.books.count, 4)
            var book = Book(id: nil, authorID: authorID, editorID: nil, title: "new", year: 2024)
            try book.insert(db)
            XCTAssertEqual(try author.books.count, 5, "a change since the load reloads")
            try? db.savepoint {
                try db.execute(sql: "DELETE FROM book WHERE authorID = ?", arguments: [authorID])
                XCTAssertEqual(try author.books.count, 0)
                throw CofferError(code: .apiMisuse, message: "undo")
            }
            XCTAssertEqual(try author.books.count, 5, "the rolled-back savepoint's load is forgotten")
        }
    }

    private func assertOutsideAClosure<T>(_ body: @autoclosure () throws -> T, line: UInt = #line) {
        XCTAssertThrowsError(try body(), line: line) { error in
            XCTAssertEqual((error as? CofferError)?.code, .apiMisuse, "\(error)", line: line)
            XCTAssertTrue("\(error)".contains("outside a read or write closure"), "\(error)", line: line)
        }
    }
}
