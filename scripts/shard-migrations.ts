// `node scripts/shard-migrations.ts --remote | --local [--persist-to DIR]`: applies migrations/shard to
// every shard database wrangler.toml binds (SHARD_0, SHARD_1, ...), one `wrangler d1 migrations apply`
// each, after the directory's own (DB). `npm run deploy` runs it with --remote, `npm run dev` with
// --local. Adding a shard = adding its [[d1_databases]] block: the next deploy migrates it too.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { runWrangler } from "./wrangler.ts";

/** The SHARD_<n> bindings of wrangler.toml's [[d1_databases]] blocks, in index order. */
export function shardBindingsOf(toml: string): string[] {
  const names = [...toml.matchAll(/^\s*binding\s*=\s*"(SHARD_(\d+))"/gm)].map((m) => ({ name: m[1]!, index: Number(m[2]) }));
  return names.sort((a, b) => a.index - b.index).map((n) => n.name);
}

export async function applyAll(target: string[]): Promise<string[]> {
  const shards = shardBindingsOf(readFileSync("wrangler.toml", "utf8"));
  for (const binding of ["DB", ...shards]) {
    console.log(`[migrations] ${binding} ${target.join(" ")}`);
    const { stdout } = await runWrangler(["d1", "migrations", "apply", binding, ...target], { env: { CI: "1" } });
    console.log(stdout.trim().split("\n").slice(-3).join("\n"));
  }
  return shards;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  if (!args.includes("--remote") && !args.includes("--local")) {
    console.error("usage: node scripts/shard-migrations.ts --remote | --local [--persist-to DIR]");
    process.exit(2);
  }
  await applyAll(args);
}
