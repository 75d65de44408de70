import { DurableObject } from "cloudflare:workers";
import { type LeaseRequest, type RateLimitDecision, SlidingWindow, WINDOW_MS, type WindowEntry, type WindowStore } from "./sliding-window.ts";

/**
 * The window's entries in the object's SQLite storage, one row per entry (a lease of many slots is
 * one row), written as they change; rows leave when their slots leave the window. AUTOINCREMENT
 * so that an id is never issued twice, even after every row has aged out: a lease id held by an
 * isolate from before can then only ever name its own entry.
 */
class SqlWindowStore implements WindowStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec("CREATE TABLE IF NOT EXISTS window_entries (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, n INTEGER NOT NULL, held INTEGER NOT NULL)");
  }

  load(cutoff: number): WindowEntry[] {
    this.removeUpTo(cutoff);
    return this.sql
      .exec<{ id: number; at: number; n: number; held: number }>("SELECT id, at, n, held FROM window_entries")
      .toArray()
      .map((r) => ({ id: r.id, at: r.at, n: r.n, held: r.held === 1 }));
  }

  insert(at: number, n: number, held: boolean): number {
    return this.sql.exec<{ id: number }>("INSERT INTO window_entries (at, n, held) VALUES (?, ?, ?) RETURNING id", at, n, held ? 1 : 0).one().id;
  }

  setCount(id: number, n: number): void {
    this.sql.exec("UPDATE window_entries SET n = ? WHERE id = ?", n, id);
  }

  remove(id: number): void {
    this.sql.exec("DELETE FROM window_entries WHERE id = ?", id);
  }

  removeUpTo(cutoff: number): void {
    this.sql.exec("DELETE FROM window_entries WHERE at <= ?", cutoff);
  }
}

/**
 * One instance per API key (or per client IP for unauthenticated requests and callbacks). Durable
 * Objects run one request at a time, so check-and-record is atomic without locks. The window is
 * kept in memory and written through to the object's storage: an eviction, a crash or a deploy
 * rebuilds it as it was, so no restart admits more than the limit in any 60 s.
 */
export class RateLimiter extends DurableObject<Env> {
  private readonly window: SlidingWindow;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const store = new SqlWindowStore(ctx.storage.sql);
    this.window = new SlidingWindow(store, store.load(Date.now() - WINDOW_MS));
  }

  take(limit: number): RateLimitDecision {
    return this.window.take(limit, Date.now());
  }

  /**
   * Slots for an isolate to spend without asking again (rate-limit-permits.ts). Held slots count
   * from the end of their hold, so the window stays exact whenever they are used.
   */
  lease(req: LeaseRequest): RateLimitDecision {
    return this.window.lease(req, Date.now());
  }
}
