// The D1 binding as bench/scale's Worker sees it: every statement that reaches D1 is counted (one per
// statement, a batch of n counts n, and one round trip), with the rows D1's result metadata says it
// read and wrote. Counters live in the isolate (`wrangler dev` runs the Worker and its Durable Objects in
// one), read and reset by the bench through its Worker's /__bench/d1 route.

export interface D1Counts {
  statements: number;
  roundTrips: number;
  rowsRead: number;
  rowsWritten: number;
}

export const counts: D1Counts = { statements: 0, roundTrips: 0, rowsRead: 0, rowsWritten: 0 };

export function resetCounts(): void {
  Object.assign(counts, { statements: 0, roundTrips: 0, rowsRead: 0, rowsWritten: 0 });
}

function addMeta(result: unknown): void {
  const meta = (result as { meta?: { rows_read?: number; rows_written?: number } } | null)?.meta;
  counts.rowsRead += meta?.rows_read ?? 0;
  counts.rowsWritten += meta?.rows_written ?? 0;
}

/** A prepared statement that counts itself when run; `real` is what D1's own batch takes. */
class CountedStatement {
  constructor(readonly real: D1PreparedStatement) {}

  bind(...values: unknown[]): CountedStatement {
    return new CountedStatement(this.real.bind(...values));
  }

  private counted<T>(run: Promise<T>): Promise<T> {
    counts.statements++;
    counts.roundTrips++;
    return run.then((r) => {
      addMeta(r);
      return r;
    });
  }

  first<T>(column?: string): Promise<T | null> {
    return this.counted(column === undefined ? this.real.first<T>() : this.real.first<T>(column));
  }

  all<T>(): Promise<D1Result<T>> {
    return this.counted(this.real.all<T>());
  }

  run<T>(): Promise<D1Result<T>> {
    return this.counted(this.real.run<T>());
  }

  raw<T>(options?: { columnNames?: boolean }): Promise<T[]> {
    return this.counted(options?.columnNames ? (this.real.raw<T>({ columnNames: true }) as unknown as Promise<T[]>) : this.real.raw<T>());
  }
}

/** `db` with every statement counted. */
export function countedD1(db: D1Database): D1Database {
  const wrapped = {
    prepare: (query: string) => new CountedStatement(db.prepare(query)),
    batch: async (statements: CountedStatement[]) => {
      counts.statements += statements.length;
      counts.roundTrips++;
      const results = await db.batch(statements.map((s) => s.real));
      for (const r of results) addMeta(r);
      return results;
    },
    exec: async (query: string) => {
      const result = await db.exec(query);
      counts.statements += result.count;
      counts.roundTrips++;
      return result;
    },
    dump: () => db.dump(),
    withSession: () => {
      throw new Error("bench/scale counts no D1 sessions: the code under test uses none");
    },
  };
  return wrapped as unknown as D1Database;
}

const wrappedEnvs = new WeakMap<Env, Env>();

/** The same env with its D1 bindings (the directory and every shard) counted (one wrapped env per env, so caches keyed on it still hit). */
export function countedEnv(env: Env): Env {
  let out = wrappedEnvs.get(env);
  if (!out) {
    const raw = env as unknown as Record<string, D1Database | undefined>;
    const shards = Object.fromEntries(Object.keys(raw).filter((k) => /^SHARD_\d+$/.test(k)).map((k) => [k, countedD1(raw[k]!)]));
    out = { ...env, DB: countedD1(env.DB), ...shards };
    wrappedEnvs.set(env, out);
  }
  return out;
}
