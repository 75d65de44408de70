import { AsyncLocalStorage } from "node:async_hooks";

/**
 * What a unit of work (a request, a queue batch, a Durable Object flush) cost in D1, per database:
 * statements sent and the rows D1 says they read and wrote (its result `meta`). Each D1 binding is
 * wrapped once (`meteredD1`); the counts go to the unit of work running when the statement ran
 * (AsyncLocalStorage), so nothing has to be passed around. Reads that D1 answers without `meta`
 * (`first()`, and `raw()`, which drizzle uses for selects outside a batch) count the rows returned,
 * a lower bound of the rows read.
 */
export interface D1Usage {
  statements: number;
  rowsRead: number;
  rowsWritten: number;
}
export type UsageByDb = Record<string, D1Usage>;

const current = new AsyncLocalStorage<UsageByDb>();

/** Runs `fn`, answering its result and the D1 usage it caused (work it left running is not waited for). */
export async function withD1Usage<T>(fn: () => Promise<T>): Promise<{ result: T; usage: UsageByDb }> {
  const usage: UsageByDb = {};
  const result = await current.run(usage, fn);
  return { result, usage };
}

function record(db: string, statements: number, meta: Partial<D1Meta> | undefined, returned = 0): void {
  const usage = current.getStore();
  if (!usage) return;
  const u = (usage[db] ??= { statements: 0, rowsRead: 0, rowsWritten: 0 });
  u.statements += statements;
  u.rowsRead += typeof meta?.rows_read === "number" ? meta.rows_read : returned;
  u.rowsWritten += typeof meta?.rows_written === "number" ? meta.rows_written : 0;
}

/** The real statement behind a metered one (D1's batch takes only its own statements). */
const realOf = new WeakMap<object, D1PreparedStatement>();

class MeteredStatement {
  constructor(
    private readonly db: string,
    private readonly stmt: D1PreparedStatement,
  ) {
    realOf.set(this, stmt);
  }
  bind(...values: unknown[]): MeteredStatement {
    return new MeteredStatement(this.db, this.stmt.bind(...values));
  }
  async first<T>(column?: string): Promise<T | null> {
    const row = column === undefined ? await this.stmt.first<T>() : await this.stmt.first<T>(column);
    record(this.db, 1, undefined, row === null ? 0 : 1);
    return row;
  }
  async run<T>(): Promise<D1Result<T>> {
    const res = await this.stmt.run<T>();
    record(this.db, 1, res.meta);
    return res;
  }
  async all<T>(): Promise<D1Result<T>> {
    const res = await this.stmt.all<T>();
    record(this.db, 1, res.meta);
    return res;
  }
  async raw<T>(options?: { columnNames?: boolean }): Promise<T[]> {
    const rows = (await (this.stmt.raw as (o?: unknown) => Promise<T[]>)(options)) as T[];
    record(this.db, 1, undefined, Math.max(0, rows.length - (options?.columnNames ? 1 : 0)));
    return rows;
  }
}

class MeteredDatabase {
  constructor(
    private readonly name: string,
    private readonly d1: D1Database,
  ) {}
  prepare(query: string): MeteredStatement {
    return new MeteredStatement(this.name, this.d1.prepare(query));
  }
  async batch<T>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    const results = await this.d1.batch<T>(statements.map((s) => realOf.get(s) ?? s));
    for (const r of results) record(this.name, 1, r.meta);
    return results;
  }
  async exec(query: string): Promise<D1ExecResult> {
    const res = await this.d1.exec(query);
    record(this.name, res.count, undefined);
    return res;
  }
  dump(): Promise<ArrayBuffer> {
    return (this.d1 as unknown as { dump(): Promise<ArrayBuffer> }).dump();
  }
  withSession(constraint?: D1SessionConstraint): D1DatabaseSession {
    return this.d1.withSession(constraint);
  }
}

const wrapped = new WeakMap<D1Database, D1Database>();

/** The binding, counted under `name` (one wrapper per binding, so drizzle's client over it is built once). */
export function meteredD1(d1: D1Database, name: string): D1Database {
  let m = wrapped.get(d1);
  if (!m) {
    m = new MeteredDatabase(name, d1) as unknown as D1Database;
    wrapped.set(d1, m);
  }
  return m;
}

/** `{directory: {statements, rowsRead, rowsWritten}, shard_0: ...}` for a log line; empty when nothing ran. */
export function usageFields(usage: UsageByDb): { d1?: UsageByDb } {
  return Object.keys(usage).length ? { d1: usage } : {};
}

/** Runs `fn` counting into `usage` (a long-lived object's running total, e.g. a Durable Object's). */
export function countInto<T>(usage: UsageByDb, fn: () => T): T {
  return current.run(usage, fn);
}

/** The counts so far, and `usage` emptied for the next period. */
export function takeUsage(usage: UsageByDb): UsageByDb {
  const out = { ...usage };
  for (const k of Object.keys(usage)) delete usage[k];
  return out;
}
