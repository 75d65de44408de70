import { defineConfig } from "drizzle-kit";

// Every shard database (`SHARD_<n>`): the messaging and events tables, each account's rows in the shard
// `accounts.shard` names. `npx drizzle-kit generate --config drizzle.shard.config.ts`; applied to every
// shard by `npm run dev`, the tests and `npm run deploy` (scripts/shard-migrations.ts).
export default defineConfig({
  dialect: "sqlite",
  schema: ["./src/db/schema/messaging.ts", "./src/db/schema/campaigns.ts", "./src/db/schema/webhooks.ts"],
  out: "./migrations/shard",
});
