/**
 * Calls that arrive while one run is under way wait and go together in the next run (at most `max`
 * at a time). An idle caller is run at once, so batching adds no wait: it only gathers what would
 * otherwise queue up one by one behind each other's round trips.
 */
export class Coalescer<T, R> {
  private waiting: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private busy = false;

  constructor(
    private readonly run: (items: T[]) => Promise<R[]>,
    private readonly max: number,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.busy) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.waiting.length > 0) {
        const taken = this.waiting.splice(0, this.max);
        try {
          const out = await this.run(taken.map((t) => t.item));
          taken.forEach((t, i) => t.resolve(out[i]!));
        } catch (err) {
          for (const t of taken) t.reject(err);
        }
      }
    } finally {
      this.busy = false;
    }
  }
}
