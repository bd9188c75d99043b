// Work not yet handed to its queue: highest priority first, then in the order added. A run of
// 100,000 jobs keeps most of them here, as one small entry each, rather than as a queued task with
// its suspended chain of promises (over 2 KB a job; see makeEngine's admission).

export interface BacklogEntry<T> {
  readonly item: T;
  readonly priority: number;
}

/** A binary heap on (priority descending, order added ascending). */
export class Backlog<T> {
  private readonly heap: { readonly item: T; readonly priority: number; readonly seq: number }[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  add(item: T, priority: number): void {
    const heap = this.heap;
    heap.push({ item, priority, seq: this.seq++ });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** The entry that comes next, without taking it. */
  peek(): BacklogEntry<T> | undefined {
    return this.heap[0];
  }

  take(): T | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined) return undefined;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let first = i;
        if (left < heap.length && this.before(left, first)) first = left;
        if (right < heap.length && this.before(right, first)) first = right;
        if (first === i) break;
        this.swap(i, first);
        i = first;
      }
    }
    return top.item;
  }

  clear(): void {
    this.heap.length = 0;
  }

  private before(a: number, b: number): boolean {
    const x = this.heap[a]!;
    const y = this.heap[b]!;
    return x.priority !== y.priority ? x.priority > y.priority : x.seq < y.seq;
  }

  private swap(a: number, b: number): void {
    const heap = this.heap;
    [heap[a], heap[b]] = [heap[b]!, heap[a]!];
  }
}
