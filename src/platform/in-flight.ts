/**
 * At most `limit` pieces of background work at once in this isolate. `acquire` waits for a free
 * place and returns its release (idempotent); a freed place goes to the longest waiter first, so
 * no caller can be overtaken for ever.
 */
export class InFlight {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  async acquire(): Promise<() => void> {
    if (this.used < this.limit) this.used++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.release();
  }

  /** A place now, or null when all are taken (the caller does something else rather than wait). */
  tryAcquire(): (() => void) | null {
    if (this.used >= this.limit || this.waiting.length > 0) return null;
    this.used++;
    return this.release();
  }

  private release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The place passes straight to the next waiter (`used` unchanged), or is freed.
      if (next) next();
      else this.used--;
    };
  }

  /** Places taken now (for tests and logs). */
  get size(): number {
    return this.used;
  }
}
