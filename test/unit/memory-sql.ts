import { DatabaseSync } from "node:sqlite";
import type { SqlLike } from "../../src/messaging/sessions/outbox.ts";

/**
 * A Durable Object's SqlStorage over node:sqlite: the same SQLite, without workerd. Pass the same
 * database twice to model a restart (a new object over the same storage).
 */
export function memorySql(db = new DatabaseSync(":memory:")): SqlLike {
  return {
    exec<T>(query: string, ...bindings: unknown[]) {
      const stmt = db.prepare(query);
      const args = bindings as (string | number | null)[];
      if (stmt.columns().length > 0) {
        const rows = stmt.all(...args) as T[];
        return {
          toArray: () => rows,
          one: () => {
            if (rows.length !== 1) throw new Error(`expected one row, got ${rows.length}`);
            return rows[0]!;
          },
          rowsWritten: 0,
        };
      }
      const changes = Number(stmt.run(...args).changes);
      return { toArray: () => [], one: () => { throw new Error("no rows"); }, rowsWritten: changes };
    },
  } as SqlLike;
}
