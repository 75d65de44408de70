import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "../helpers.ts";

describe("event poll: errors", () => {
  it.each([
    ["a malformed cursor", "?after=abc"],
    ["a cursor of another kind", "?after=msg_0mh8k2x1qa1b2c3d4e5f6"],
    ["a cursor with capitals", "?after=evt_0MH8K2X1QA1B2C3D4E5F6"],
    ["an injected cursor", `?after=${encodeURIComponent("evt_' OR 1=1 --aaaaaaaaa")}`],
    ["a huge cursor", `?after=evt_${"a".repeat(10_000)}`],
    ["wait over 25 s", "?wait=26"],
    ["a negative wait", "?wait=-1"],
    ["a fractional wait", "?wait=1.5"],
    ["limit 0", "?limit=0"],
    ["limit over 500", "?limit=501"],
    ["an unknown type", "?types=message.received,nope"],
    ["a too long session id", `?sessionId=${"s".repeat(65)}`],
  ])("400 for %s", async (_what, query) => {
    const k = await createKey("pro");
    const res = await api(`/api/events/poll${query}`, { key: k.key });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe("invalid_request");
  });

  it("405 for other methods", async () => {
    const k = await createKey("pro");
    expect((await api("/api/events/poll", { method: "POST", key: k.key })).status).toBe(405);
  });
});
