import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// The Worker as deployed: src/index.ts with wrangler.toml's [vars] as they are, so loopback URLs are
// refused (ALLOW_LOOPBACK_URLS = "0") and no SIGNING_SECRET is set. The main Workers project
// (vitest.workers.config.ts) runs with dev settings; the behaviour that depends on them is tested here.
// Only the migrations are added; nothing else may be overridden (test/workers-deployed/deployed.test.ts
// checks it, as a local .dev.vars would leak in too).
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  const shardMigrations = await readD1Migrations("./migrations/shard");
  return {
    plugins: [
      cloudflareTest({
        main: "./src/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: { bindings: { TEST_MIGRATIONS: migrations, TEST_SHARD_MIGRATIONS: shardMigrations } },
      }),
    ],
    test: {
      name: "workers-deployed",
      include: ["test/workers-deployed/**/*.test.ts"],
      setupFiles: ["./test/workers/setup.ts"],
      // A webhook receiver on loopback: the Worker must never call it.
      globalSetup: ["./test/support/receiver-setup.ts"],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      onConsoleLog: (log: string) => !log.includes('"msg":"request"'),
    },
  };
});
