// `npm run client:generate`: starts the Worker under `npm run dev` on free ports (no compile server is
// needed for the document), reads its /openapi.json and writes client/openapi.json and the types
// client/schema.d.ts. Both are committed; test/workers/client-schema.test.ts and
// test/unit/client-schema.node.test.ts fail when they are stale.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, startDev } from "../test/e2e/harness.ts";
import { documentSource, schemaSource } from "../client/generate.ts";

const dev = await startDev({ env: { COMPILER_URL: "http://127.0.0.1:9", SKIP_TEX_CHECK: "1" } });
try {
  const res = await fetch(`${dev.baseUrl}/openapi.json`);
  if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}`);
  const doc = (await res.json()) as object;
  writeFileSync(join(ROOT, "client", "openapi.json"), documentSource(doc));
  writeFileSync(join(ROOT, "client", "schema.d.ts"), await schemaSource(doc));
  console.log("wrote client/openapi.json and client/schema.d.ts");
} finally {
  await dev.stop();
}
