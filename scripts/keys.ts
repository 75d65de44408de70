// `npm run -s keys -- <command>`: manage accounts and API keys in D1 (docs/contracts.md §1).
//
//   create --name NAME --plan free|pro|enterprise [--limit N] [--account ID [--force]] [--remote]
//   list [--account ID] [--remote]
//   revoke KEY_ID [--remote]
//   plan ACCOUNT_ID free|pro|enterprise [--limit N] [--remote]
//
// Works on the local D1 that `npm run dev` uses (or PERSIST_TO), or the deployed one with --remote.
// `create` prints the new key alone on the last line of stdout; it is never shown again. With
// --account it keeps the plan's cap on active keys, as POST /api/keys does (--force goes over it).
import { parseArgs } from "node:util";
import { generateApiKey, hashApiKey } from "../src/platform/key-format.ts";
import { newId } from "../src/platform/ids.ts";
import { keyLimitFor, PLANS, type Plan } from "../src/platform/plans.ts";
import { parseNewAccountShards } from "../src/platform/config.ts";
import { pickShard } from "../src/platform/shard-pick.ts";
import { readFileSync } from "node:fs";
import { shardBindingsOf } from "./shard-migrations.ts";
import { runWrangler } from "./wrangler.ts";

const USAGE = `usage: npm run -s keys -- <command>
  create --name NAME --plan free|pro|enterprise [--limit N] [--account ID [--force]] [--remote]
  list [--account ID] [--remote]
  revoke KEY_ID [--remote]
  plan ACCOUNT_ID free|pro|enterprise [--limit N] [--remote]`;

function fail(message: string): never {
  console.error(`keys: ${message}`);
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        name: { type: "string" },
        plan: { type: "string" },
        limit: { type: "string" },
        account: { type: "string" },
        remote: { type: "boolean", default: false },
        force: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (err) {
    fail(`${(err as Error).message.split(".")[0]}.\n${USAGE}`);
  }
}

const { values, positionals } = parse();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

/** SQL string literal; every value we interpolate passes through here. */
const q = (v: string | number | null): string => (v === null ? "NULL" : typeof v === "number" ? String(Math.trunc(v)) : `'${v.replace(/'/g, "''")}'`);

async function sql(command: string): Promise<Record<string, unknown>[]> {
  const target = values.remote ? ["--remote"] : ["--local", ...(process.env.PERSIST_TO ? ["--persist-to", process.env.PERSIST_TO] : [])];
  const { stdout } = await runWrangler(["d1", "execute", "DB", ...target, "--json", "--command", command], { env: { CI: "1" } });
  const parsed = JSON.parse(stdout.slice(stdout.indexOf("["))) as { results?: Record<string, unknown>[] }[];
  return parsed.flatMap((r) => r.results ?? []);
}

function parsePlan(value: string | undefined): Plan {
  if (!value || !(PLANS as readonly string[]).includes(value)) fail(`--plan must be one of ${PLANS.join(", ")}`);
  return value as Plan;
}

function parseLimit(plan: Plan): number | null {
  if (values.limit === undefined) return null;
  const n = Number(values.limit);
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) fail("--limit must be a whole number from 1 to 1000000");
  if (plan !== "enterprise") fail("--limit applies to the enterprise plan only");
  return n;
}

/**
 * The shard a new account goes to, as the Worker places them: NEW_ACCOUNT_SHARDS (the environment, else
 * wrangler.toml's [vars]) over wrangler.toml's SHARD_<n> bindings, by the same stable hash of the id.
 */
function newAccountShard(accountId: string): number {
  const toml = readFileSync("wrangler.toml", "utf8");
  const configured = process.env.NEW_ACCOUNT_SHARDS ?? /^NEW_ACCOUNT_SHARDS\s*=\s*"([^"]*)"/m.exec(toml)?.[1] ?? "";
  return pickShard(accountId, parseNewAccountShards(configured, shardBindingsOf(toml).length));
}

const [command, ...args] = positionals;
const now = Date.now();

switch (command) {
  case "create": {
    const name = values.name ?? "default";
    let accountId = values.account;
    const statements: string[] = [];
    /** With --account: the key goes in only if the account exists and (without --force) holds fewer active keys than its plan's cap. */
    let where = "";
    if (accountId) {
      // one wrangler run (each costs seconds): the account's check, and the cap per plan, in the insert itself
      const caps = PLANS.map((p) => `WHEN ${q(p)} THEN ${q(keyLimitFor(p, { ENTERPRISE_MAX_ACTIVE_KEYS: process.env.ENTERPRISE_MAX_ACTIVE_KEYS }))}`).join(" ");
      const capOf = `CASE (SELECT plan FROM accounts WHERE id = ${q(accountId)}) ${caps} END`;
      statements.push(`SELECT CASE plan ${caps} END AS account_cap FROM accounts WHERE id = ${q(accountId)}`);
      where = ` WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ${q(accountId)})`;
      if (!values.force) where += ` AND (SELECT count(*) FROM api_keys WHERE account_id = ${q(accountId)} AND revoked_at IS NULL) < ${capOf}`;
    } else {
      const plan = parsePlan(values.plan);
      const limit = parseLimit(plan);
      accountId = newId("acc");
      const shard = newAccountShard(accountId);
      statements.push(`INSERT INTO accounts (id, name, plan, rate_limit_per_minute, shard, created_at) VALUES (${q(accountId)}, ${q(name)}, ${q(plan)}, ${q(limit)}, ${q(shard)}, ${now})`);
    }
    const { key, prefix } = generateApiKey();
    const keyId = newId("key");
    const row = `${q(keyId)}, ${q(accountId)}, ${q(name)}, ${q(prefix)}, ${q(await hashApiKey(key))}, ${now}`;
    statements.push(`INSERT INTO api_keys (id, account_id, name, prefix, hash, created_at) SELECT ${row}${where} RETURNING id AS key_id`);
    const rows = await sql(statements.join("; "));
    if (!rows.some((r) => r.key_id === keyId)) {
      const account = rows.find((r) => "account_cap" in r);
      if (values.account && !account) fail(`no account ${accountId}`);
      fail(`account ${accountId} already has ${String(account?.account_cap)} active API keys, the most its plan allows; revoke one (keys revoke KEY_ID) or pass --force`);
    }
    console.log(`account ${accountId}`);
    console.log(`key id ${keyId} (prefix ${prefix})`);
    console.log("The key is shown once; store it now:");
    console.log(key);
    break;
  }
  case "list": {
    const where = values.account ? `WHERE k.account_id = ${q(values.account)}` : "";
    const rows = await sql(
      `SELECT k.id, k.prefix, k.name, k.account_id, a.plan, a.rate_limit_per_minute, k.created_at, k.revoked_at FROM api_keys k JOIN accounts a ON a.id = k.account_id ${where} ORDER BY k.created_at`,
    );
    console.table(
      rows.map((r) => ({
        id: r.id,
        prefix: r.prefix,
        name: r.name,
        account: r.account_id,
        plan: r.plan,
        limit: r.rate_limit_per_minute ?? "",
        created: new Date(Number(r.created_at)).toISOString(),
        revoked: r.revoked_at ? new Date(Number(r.revoked_at)).toISOString() : "",
      })),
    );
    break;
  }
  case "revoke": {
    const keyId = args[0] ?? fail("usage: keys revoke KEY_ID");
    const rows = await sql(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${now}) WHERE id = ${q(keyId)} RETURNING id`);
    if (rows.length === 0) fail(`no key ${keyId}`);
    console.log(`revoked ${keyId} (stops working within 60 seconds)`);
    break;
  }
  case "plan": {
    const accountId = args[0] ?? fail("usage: keys plan ACCOUNT_ID PLAN [--limit N]");
    const plan = parsePlan(args[1]);
    const limit = parseLimit(plan);
    const rows = await sql(`UPDATE accounts SET plan = ${q(plan)}, rate_limit_per_minute = ${q(limit)} WHERE id = ${q(accountId)} RETURNING id`);
    if (rows.length === 0) fail(`no account ${accountId}`);
    console.log(`account ${accountId} is now on ${plan}${limit ? ` (${limit}/min)` : ""}; takes effect within 60 seconds`);
    break;
  }
  default:
    fail("usage: keys create|list|revoke|plan (see scripts/keys.ts)");
}
