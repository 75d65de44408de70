import type { SqlLike } from "./outbox.ts";

/**
 * Storage written before the change counter (`wb_messages`, with a dirty flag per row and a version):
 * its rows move to `wb_rows` once, the dirty ones numbered above the mark in their old flush order
 * (they wait for D1 as before), the clean ones at 0. `states`: write-buffer.ts's values of a row
 * still expecting receipts and of a final one (the old clean flags had the same values).
 */
export function migrateDirtyFlags(sql: SqlLike, flushed: number, states: { open: number; done: number }): void {
  if (sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'wb_messages'").one().n === 0) return;
  sql.exec(
    `INSERT INTO wb_rows (id, external_id, row, state, chg)
       SELECT id, external_id, row,
              CASE WHEN dirty = 1 THEN (CASE WHEN json_extract(row, '$.status') IN ('pending', 'sent', 'delivered') THEN ? ELSE ? END) ELSE dirty END,
              CASE WHEN dirty = 1 THEN ? + row_number() OVER (PARTITION BY dirty = 1 ORDER BY touched, id) ELSE 0 END
         FROM wb_messages WHERE true ON CONFLICT (id) DO NOTHING`,
    states.open,
    states.done,
    flushed,
  );
  sql.exec("DROP TABLE wb_messages");
}
