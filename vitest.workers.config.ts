import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { copyDocsAssets } from "./scripts/docs-assets.ts";
import { buildDashboard } from "./scripts/dashboard-build.ts";

// Workers-runtime tests: the Worker of wrangler.toml under workerd with local D1, R2, Queues and
// Durable Objects. Migrations are read here and applied in test/workers/setup.ts: the directory's to DB,
// the shards' to every SHARD_<n> of wrangler.toml (two, so routing between shards is always exercised).
export default defineConfig(async () => {
  // The /docs viewer's files and the console's build must be in the assets directory before the Worker starts.
  copyDocsAssets();
  await buildDashboard();
  const migrations = await readD1Migrations("./migrations");
  const shardMigrations = await readD1Migrations("./migrations/shard");
  return {
    plugins: [
      cloudflareTest(async ({ inject }) => ({
        // The real Worker (src/index.ts) with its events consumer tapped for the tests.
        main: "./test/workers/worker.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // A third shard beside wrangler.toml's two, as if just added: NEW_ACCOUNT_SHARDS ("0,1") sends
          // no new account to it, so the suite runs with a shard added and nothing moved.
          d1Databases: { SHARD_2: "texmsg-shard-2-added" },
          bindings: {
            TEST_MIGRATIONS: migrations,
            TEST_SHARD_MIGRATIONS: shardMigrations,
            ALLOW_LOOPBACK_URLS: "1",
            COMPILER_URL: inject<string>("compilerUrl") ?? "",
            WEBHOOK_RETRY_SCHEDULE: "1,1,1",
            SANDBOX_DELIVERED_MS: "100",
            SANDBOX_READ_MS: "200",
            SANDBOX_TEMPLATE_APPROVAL_MS: "300",
            WEBHOOK_TIMEOUT_MS: "1500",
            GRAPH_API_BASE_URL: `${inject<string>("graphUrl") ?? "http://127.0.0.1:9"}/v23.0`,
            // A send the fake never answers ends in 4 s, not 15.
            GRAPH_API_TIMEOUT_MS: "4000",
            SIGNING_SECRET: "test-signing-secret",
          },
        },
      })),
    ],
    test: {
      name: "workers",
      include: ["test/workers/**/*.test.ts", "test/unit/**/*.test.ts"],
      // These run on Node (`npm run test:unit`).
      exclude: ["test/unit/**/*.node.test.ts"],
      setupFiles: ["./test/workers/setup.ts"],
      globalSetup: [
        "./test/workers/global-setup.ts",
        "./test/support/receiver-setup.ts",
        "./test/workers/compile/global-setup.ts",
        "./test/support/fake-graph-setup.ts",
      ],
      testTimeout: 30_000,
      // Two workerd runtimes, each reused from file to file: a fresh runtime per file cost about 3 s of
      // start-up and module loading, half of the suite's time. Files share their runtime's storage and module
      // state, so every test makes its own accounts and sessions and restores what it changes (timers, env).
      // Four runtimes finished sooner on an idle machine, but on 2 loaded cores their real-time waits
      // (throttle rates, retries) ran late.
      isolate: false,
      maxWorkers: 2,
      // One JSON line per request is for production logs; keep test output readable.
      onConsoleLog: (log: string) => !log.includes('"msg":"request"'),
      hookTimeout: 60_000,
    },
  };
});
