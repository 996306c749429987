// Remembered answers to operator requests, by requester and request id: a requester re-sends until it is
// answered, and a repeat whose answer was lost must get the same answer, not a second execution.
export class AnswerCache<T> {
  /** Insertion order is age order: the first key is the oldest. */
  private readonly answers = new Map<string, T>();

  constructor(private readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      throw new RangeError(`answer cache capacity must be a positive integer, got ${capacity}`);
  }

  get size(): number {
    return this.answers.size;
  }

  get(requester: string, requestId: number): T | undefined {
    return this.answers.get(key(requester, requestId));
  }

  /** Keeps the answer, forgetting the oldest one beyond the capacity. */
  remember(requester: string, requestId: number, answer: T): void {
    this.answers.set(key(requester, requestId), answer);
    if (this.answers.size > this.capacity) {
      const oldest = this.answers.keys().next().value;
      if (oldest !== undefined) this.answers.delete(oldest);
    }
  }
}

function key(requester: string, requestId: number): string {
  return `${requester}#${requestId}`;
}
