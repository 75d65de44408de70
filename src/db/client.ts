import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema/index.ts";

export type Db = ReturnType<typeof build>;

const build = (d1: D1Database) => drizzle(d1, { schema });

// drizzle() walks the whole schema to build its relational config: do it once per binding, not per call.
const clients = new WeakMap<D1Database, Db>();

export function getDb(d1: D1Database): Db {
  let db = clients.get(d1);
  if (!db) {
    db = build(d1);
    clients.set(d1, db);
  }
  return db;
}
