import { defineConfig } from "drizzle-kit";

// The directory database (`DB`): accounts, keys, idempotency, dead letters, compile jobs and assets, and the tables
// looked up before the account is known. The shards' tables: drizzle.shard.config.ts. Migrations are
// generated here and applied by `wrangler d1 migrations apply` (local, remote and in tests).
export default defineConfig({
  dialect: "sqlite",
  schema: ["./src/db/schema/platform.ts", "./src/db/schema/compile.ts", "./src/db/schema/compile-assets.ts", "./src/db/schema/directory.ts"],
  out: "./migrations",
});
