// BoundedQueue — the bounded FIFO between the salvage thread and the writer thread (SalvagePipeline).

import Foundation

/// A FIFO of at most `capacity` elements shared by one producer and one consumer thread.
final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    // Every stored property below is read and written only while `condition` is locked.
    private let condition = NSCondition()
    /// Waiting elements from `head` on; a slot before `head` was taken and is nil, so that a batch the
    /// consumer took is not kept alive here until the array is compacted.
    private var items: [Element?] = []
    private var head = 0
    private let capacity: Int
    private var producerDone = false
    private var cancelled = false
    private var consumerFailure: (any Error)?
    private var spent: [Element] = []

    /// Why the consumer stopped early: the salvage was cancelled.
    struct Cancelled: Error {}

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The consumer's error, once it has failed.
    var failure: (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        return consumerFailure
    }

    /// The number of elements waiting (for tests).
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return items.count - head
    }

    /// Appends `element`, waiting while the queue is full. Throws the consumer's error once it has failed.
    /// Elements the consumer has retired since the last push are released here, on the producer's thread.
    func push(_ element: Element) throws {
        let retired = try append(element)
        _ = retired  // released after the lock is let go
    }

    private func append(_ element: Element) throws -> [Element] {
        condition.lock()
        defer { condition.unlock() }
        while items.count - head >= capacity, consumerFailure == nil, !cancelled { condition.wait() }
        if let consumerFailure { throw consumerFailure }
        if cancelled { throw Cancelled() }
        items.append(element)
        condition.broadcast()
        let retired = spent
        spent = []
        return retired
    }

    /// Hands a consumed element back so that the producer frees it. The producer allocated its memory, and
    /// glibc returns a block freed on another thread to the allocating thread's arena under that arena's
    /// lock: freeing row batches on the writer cost it about a tenth of its time in malloc locks.
    func retire(_ element: Element) {
        condition.lock()
        spent.append(element)
        condition.unlock()
    }

    /// The next element, waiting while the queue is empty; nil once the producer is done and every element
    /// was taken, or when the queue was cancelled.
    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count, !producerDone, !cancelled { condition.wait() }
        if cancelled || head == items.count { return nil }
        let element = items[head]
        items[head] = nil
        head += 1
        if head >= 64, head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return element
    }

    /// The producer will push nothing more.
    func finishProducing() {
        condition.lock()
        producerDone = true
        condition.broadcast()
        condition.unlock()
    }

    /// The consumer failed: wakes and fails the producer's pushes with `error`.
    func fail(_ error: any Error) {
        condition.lock()
        if consumerFailure == nil { consumerFailure = error }
        condition.broadcast()
        condition.unlock()
    }

    /// The producer failed: the consumer stops at its next pop.
    func cancel() {
        condition.lock()
        cancelled = true
        items.removeAll()
        head = 0
        condition.broadcast()
        condition.unlock()
    }
}
