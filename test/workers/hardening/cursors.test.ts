import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "../helpers.ts";
import { createCampaign } from "../campaigns/support.ts";
import { json, sandboxSession } from "../messaging/support.ts";

const b64url = (value: unknown) => btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** Cursors of the wrong shape for an id-ordered list; each must be a 400, not a 500 nor an ignored cursor. */
const BAD_ID_CURSORS = [
  "eyJpZCI6e319", // {"id":{}}
  "eyJpZCI6W119", // {"id":[]}
  b64url({ id: 5 }),
  b64url({ id: "" }),
  b64url({ id: null }),
  b64url({ id: "x".repeat(65) }),
  b64url({ id: "con_a", extra: 1 }),
  b64url({ seq: 1 }),
  b64url([]),
  b64url("id"),
  "not base64 at all!",
  "e30", // {}
];

describe("list cursors are validated by type (400 invalid_cursor)", () => {
  it("every list endpoint refuses a cursor of the wrong shape", async () => {
    const k = await createKey();
    const session = await sandboxSession(k.key);
    const hook = await json<{ id: string }>(await api("/api/webhooks", { method: "POST", key: k.key, json: { url: "http://127.0.0.1:9/hook", events: ["*"] } }));
    const campaign = await createCampaign(k.key, { sessionId: session.id, message: { text: "hi" }, audience: { all: true } });
    const lists = [
      "/api/keys",
      "/api/contacts",
      "/api/sessions",
      "/api/messages/14155550123@c.us",
      "/api/webhooks",
      `/api/webhooks/${hook.id}/deliveries`,
      "/api/campaigns",
      "/v1/compile/jobs",
    ];
    for (const path of lists) {
      for (const cursor of BAD_ID_CURSORS) {
        const res = await api(`${path}?cursor=${encodeURIComponent(cursor)}`, { key: k.key });
        expect(res.status, `${path} cursor=${cursor}`).toBe(400);
        expect((await errorOf(res)).code).toBe("invalid_cursor");
      }
    }
    for (const cursor of ["eyJzZXEiOnt9fQ", b64url({ seq: "1" }), b64url({ seq: -1 }), b64url({ seq: 1.5 }), b64url({ id: "x" })]) {
      const res = await api(`/api/campaigns/${campaign.id}/recipients?cursor=${encodeURIComponent(cursor)}`, { key: k.key });
      expect(res.status, `recipients cursor=${cursor}`).toBe(400);
      expect((await errorOf(res)).code).toBe("invalid_cursor");
    }
  });

  it("a cursor from the previous page still works", async () => {
    const k = await createKey();
    for (const phone of ["+14155550901", "+14155550902", "+14155550903"]) {
      expect((await api("/api/contacts", { method: "POST", key: k.key, json: { phone } })).status).toBe(201);
    }
    const first = await json<{ data: { id: string }[]; nextCursor: string }>(await api("/api/contacts?limit=2", { key: k.key }));
    expect(first.data).toHaveLength(2);
    const second = await json<{ data: { id: string }[]; nextCursor: string | null }>(await api(`/api/contacts?limit=2&cursor=${first.nextCursor}`, { key: k.key }));
    expect(second.data).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
  });
});
