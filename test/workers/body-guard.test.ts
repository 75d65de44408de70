import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "./helpers.ts";

/** A body as a stream of `chunks` pieces of `size` bytes: no Content-Length, no Transfer-Encoding. */
function streamed(text: string, chunks: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= chunks) return controller.close();
      sent++;
      controller.enqueue(bytes);
    },
  });
}

const post = (path: string, key: string, body: BodyInit | null, headers: Record<string, string> = {}) =>
  api(path, { method: "POST", key, body, headers, duplex: "half" } as RequestInit & { key: string });

describe("body guard: decided by the body, not by its headers", () => {
  it("a streamed body without Content-Length over the route's limit is 413, counted as it streams", async () => {
    const k = await createKey("enterprise", { limit: 100_000 });
    let pulled = 0;
    const piece = new TextEncoder().encode(`{"name":"${"x".repeat(64 * 1024)}`);
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(piece);
      },
    });
    const res = await post("/api/sessions", k.key, endless, { "Content-Type": "application/json" });
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe("payload_too_large");
    // An endless stream is abandoned soon after 1 MiB, not read to the end.
    expect(pulled).toBeLessThan(40);
  });

  it("a streamed non-JSON body without headers is 415; a streamed JSON body under the limit is read", async () => {
    const k = await createKey("enterprise", { limit: 100_000 });
    const text = await post("/api/sessions", k.key, streamed("name=x", 1), { "Content-Type": "text/plain" });
    expect(text.status).toBe(415);
    const ok = await post("/api/sessions", k.key, streamed(JSON.stringify({ network: "sandbox", name: "streamed" }), 1), { "Content-Type": "application/json" });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({ name: "streamed", network: "sandbox" });
  });

  it("a Content-Length over the limit is 413 at once; a lower one does not bound what is read", async () => {
    const k = await createKey("enterprise", { limit: 100_000 });
    const claimed = await post("/api/sessions", k.key, streamed("{}", 1), { "Content-Type": "application/json", "Content-Length": String(2 * 1024 * 1024) });
    expect(claimed.status).toBe(413);
    const lying = await post("/api/sessions", k.key, streamed(`{"name":"${"y".repeat(512 * 1024)}`, 3), { "Content-Type": "application/json", "Content-Length": "10" });
    expect(lying.status).toBe(413);
  });

  it("a bodyless POST with a stray Transfer-Encoding or Content-Length header is not refused as non-JSON", async () => {
    const k = await createKey("enterprise", { limit: 100_000 });
    const stray: Record<string, string>[] = [{ "Transfer-Encoding": "chunked" }, { "Content-Length": "12" }, { "Content-Type": "text/plain", "Content-Length": "0" }];
    for (const headers of stray) {
      const res = await post("/api/sessions/ses_missing/restart", k.key, null, headers);
      expect(res.status, JSON.stringify(headers)).toBe(404);
    }
    // An empty stream counts as no body.
    const empty = await post("/api/sessions/ses_missing/restart", k.key, streamed("", 0));
    expect(empty.status).toBe(404);
  });

  it("a GET with body headers is answered as a GET", async () => {
    const k = await createKey("enterprise", { limit: 100_000 });
    const res = await api("/api/account", { key: k.key, headers: { "Transfer-Encoding": "chunked", "Content-Length": "99999999", "Content-Type": "text/plain" } });
    expect(res.status).toBe(200);
  });
});
