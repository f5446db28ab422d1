/**
 * The simulator's agenda: a binary min-heap of things due at a simulated time. Ties break on
 * `seq` (the order they were scheduled), so the pop order — and thus the event stream — is a pure
 * function of what was scheduled, never of how a caller slices time.
 */
export interface Scheduled {
  time: number
  seq: number
}

export class Schedule<A extends Scheduled> {
  private readonly heap: Array<A> = []
  private nextSeq = 0

  get size(): number {
    return this.heap.length
  }

  /** Earliest due item, without removing it. */
  peek(): A | undefined {
    return this.heap[0]
  }

  /** Adds `item` due at `time`. */
  add(item: A, time: number): void {
    item.time = time
    item.seq = this.nextSeq++
    const heap = this.heap
    let i = heap.length
    heap.push(item)
    while (i > 0) {
      const parent = (i - 1) >> 1
      const p = heap[parent]!
      if (p.time < time || (p.time === time && p.seq < item.seq)) break
      heap[i] = p
      i = parent
    }
    heap[i] = item
  }

  /** Removes and returns the earliest due item. */
  pop(): A | undefined {
    const heap = this.heap
    const top = heap[0]
    const last = heap.pop()
    if (top === undefined || last === undefined || heap.length === 0) return top
    const n = heap.length
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      let child = left
      let c = heap[left]!
      if (right < n) {
        const r = heap[right]!
        if (r.time < c.time || (r.time === c.time && r.seq < c.seq)) {
          child = right
          c = r
        }
      }
      if (last.time < c.time || (last.time === c.time && last.seq < c.seq)) break
      heap[i] = c
      i = child
    }
    heap[i] = last
    return top
  }
}
