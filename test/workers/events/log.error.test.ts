import { describe, expect, it } from "vitest";
import { api, createKey, emitEvent, errorOf } from "../webhooks/support.ts";

const DAY = 86_400_000;

describe("events log: errors", () => {
  it("refuses bounds outside the retention window or reversed, bad filters, bad cursors and big pages with 400", async () => {
    const k = await createKey();
    const now = Date.now();
    const cases: Array<[string, string]> = [
      [`since=${new Date(now - 31 * DAY).toISOString()}`, "invalid_request"],
      [`since=${new Date(now).toISOString()}&until=${new Date(now - 1000).toISOString()}`, "invalid_request"],
      ["since=yesterday", "invalid_request"],
      ["until=2026-02-30T25:00:00Z", "invalid_request"],
      ["type=message.nope", "invalid_request"],
      ["delivery=lost", "invalid_request"],
      ["limit=51", "invalid_request"],
      ["limit=0", "invalid_request"],
      [`sessionId=${"s".repeat(65)}`, "invalid_request"],
      ["cursor=not-a-cursor", "invalid_cursor"],
      [`cursor=${btoa(JSON.stringify({ id: { $gt: "" } }))}`, "invalid_cursor"],
      [`cursor=${"A".repeat(513)}`, "invalid_request"],
    ];
    for (const [query, code] of cases) {
      const res = await api(`/api/events?${query}`, { key: k.key });
      expect(res.status, query.slice(0, 80)).toBe(400);
      expect((await errorOf(res)).code, query.slice(0, 80)).toBe(code);
    }
    // inside the window: fine, even empty
    expect((await api(`/api/events?since=${new Date(now - 29 * DAY).toISOString()}`, { key: k.key })).status).toBe(200);
  });

  it("answers 404 for an unknown or over-long event id, and a cursor past `until` stays within `until`", async () => {
    const k = await createKey();
    expect((await api("/api/events/evt_nope", { key: k.key })).status).toBe(404);
    expect((await api(`/api/events/${"e".repeat(65)}`, { key: k.key })).status).toBe(400);
    const [first] = await emitEvent({ accountId: k.accountId });
    await new Promise((r) => setTimeout(r, 5));
    const until = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    await emitEvent({ accountId: k.accountId });
    // a forged cursor above `until` must not widen the range
    const cursor = btoa(JSON.stringify({ id: "evt_zzzzzzzzz" })).replace(/=+$/, "");
    const res = await api(`/api/events?until=${until}&cursor=${cursor}`, { key: k.key });
    expect(((await res.json()) as { data: { id: string }[] }).data.map((e) => e.id)).toEqual([first!.id]);
  });
});
