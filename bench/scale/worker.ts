// bench/scale's Worker: the real one (src/index.ts) with its D1 binding counted (d1-count.ts) in every
// handler and Durable Object, and one extra route, /__bench/d1: GET answers the counters and the row
// count of every table, POST resets the counters. Requests with an `x-bench-observer` header (the
// bench's own progress polling) run on the uncounted binding, so watching a flow does not add to it.
// `npm run bench:scale` starts `npm run dev` with WORKER_MAIN pointing here.
import worker, { EventStreamDO as RealEventStreamDO, RateLimiter, SessionDO as RealSessionDO, TexContainer, WebhookThrottleDO as RealWebhookThrottleDO } from "../../src/index.ts";
import { counts, countedEnv, resetCounts } from "./d1-count.ts";

export { RateLimiter, TexContainer };
export { PortfolioDO } from "../../src/index.ts";

/** Its alarm makes throttled attempts (D1 reads and writes): counted too. */
export class WebhookThrottleDO extends RealWebhookThrottleDO {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, countedEnv(env));
  }
}

export class SessionDO extends RealSessionDO {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, countedEnv(env));
  }
}

export class EventStreamDO extends RealEventStreamDO {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, countedEnv(env));
  }
}

/** Rows per table (the bench's "rows inserted" is the growth of their sum). */
async function tableRows(db: D1Database): Promise<Record<string, number>> {
  const tables = await db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations'").all<{ name: string }>();
  const out: Record<string, number> = {};
  for (const { name } of tables.results) {
    const row = await db.prepare(`SELECT count(*) AS n FROM "${name.replaceAll('"', '""')}"`).first<{ n: number }>();
    out[name] = row?.n ?? 0;
  }
  return out;
}

export default {
  async fetch(req: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname === "/__bench/d1") {
      if (req.method === "POST") resetCounts();
      // `?tables=0`: the counters only (the bench's wait for quiet polls them four times a second;
      // counting every table's rows each time made the observer part of the load measured).
      if (url.searchParams.get("tables") === "0") return Response.json({ ...counts, tables: {} });
      // Rows per table summed over the directory and every shard.
      const tables: Record<string, number> = {};
      const raw = env as unknown as Record<string, D1Database | undefined>;
      for (const d1 of [env.DB, ...Object.keys(raw).filter((k) => /^SHARD_\d+$/.test(k)).map((k) => raw[k]!)]) {
        for (const [name, n] of Object.entries(await tableRows(d1))) tables[name] = (tables[name] ?? 0) + n;
      }
      return Response.json({ ...counts, tables });
    }
    return worker.fetch(req, req.headers.has("x-bench-observer") ? env : countedEnv(env), ctx);
  },
  queue: (batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext) => worker.queue(batch, countedEnv(env), ctx),
  scheduled: (controller: ScheduledController, env: Env) => worker.scheduled(controller, countedEnv(env)),
} satisfies ExportedHandler<Env>;
