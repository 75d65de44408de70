import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eventPageQuery, type EventPageFilter } from "../../../src/events/log/query.ts";

/** EXPLAIN QUERY PLAN of the page query: every filter combination reads its index by a bounded range, never a scan or a sort. */
async function planOf(f: Omit<EventPageFilter, "accountId" | "fromId" | "beforeId" | "take">): Promise<string[]> {
  const { sql, params } = eventPageQuery({ accountId: "acc_x", fromId: "evt_0", beforeId: "evt_z", take: 21, ...f });
  // The events tables live in the shards (every shard has the same schema).
  const rows = await env.SHARD_0.prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...params).all<{ detail: string }>();
  return rows.results.map((r) => r.detail);
}

describe("events log: query cost", () => {
  const cases: Array<[string, Omit<EventPageFilter, "accountId" | "fromId" | "beforeId" | "take">, RegExp]> = [
    ["no filter", {}, /^SEARCH events USING (COVERING )?INDEX events_account_id_idx \(account_id=\? AND id>\? AND id<\?\)$/],
    ["type", { type: "message.read" }, /^SEARCH events USING (COVERING )?INDEX events_account_type_idx \(account_id=\? AND type=\? AND id>\? AND id<\?\)$/],
    ["session", { sessionId: "s" }, /^SEARCH events USING (COVERING )?INDEX events_account_session_idx \(account_id=\? AND session_id=\? AND id>\? AND id<\?\)$/],
    ["session and type", { sessionId: "s", type: "message.read" }, /^SEARCH events USING INDEX events_account_session_idx \(account_id=\? AND session_id=\? AND id>\? AND id<\?\)$/],
    ["delivery", { delivery: "failed" }, /^SEARCH d USING COVERING INDEX deliveries_account_status_event_idx \(account_id=\? AND status=\? AND event_id>\? AND event_id<\?\)$/],
    ["delivery and type", { delivery: "failed", type: "message.read" }, /^SEARCH d USING COVERING INDEX deliveries_account_status_event_idx \(account_id=\? AND status=\? AND event_id>\? AND event_id<\?\)$/],
    ["delivery, session and type", { delivery: "pending", sessionId: "s", type: "message.read" }, /^SEARCH d USING COVERING INDEX deliveries_account_status_event_idx \(account_id=\? AND status=\? AND event_id>\? AND event_id<\?\)$/],
  ];
  for (const [name, filter, first] of cases) {
    it(`${name}: one index range, no scan, no sort`, async () => {
      const plan = await planOf(filter);
      expect(plan[0]).toMatch(first);
      for (const step of plan) {
        expect(step).not.toMatch(/^SCAN|TEMP B-TREE/);
        // the per-event check of a delivery filter probes events by primary key
        if (step.startsWith("SEARCH e ")) expect(step).toMatch(/USING INDEX sqlite_autoindex_events_1 \(id=\?\)/);
      }
      if (filter.delivery && (filter.type || filter.sessionId)) expect(plan.some((s) => s.startsWith("SEARCH e "))).toBe(true);
    });
  }
});
