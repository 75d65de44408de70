// Compile assets belong to one account: no other account sees, uses, deletes or learns of them,
// even when it holds the same bytes.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "../helpers.ts";
import { assetRow, chapter, DOT_PNG, mainDoc, upload } from "./asset-helpers.ts";
import { compileSync } from "./helpers.ts";

describe("assets: accounts never share", () => {
  it("another account's asset is unknown everywhere: metadata, list, delete and compiles", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const tag = crypto.randomUUID();
    const text = await upload(a.key, chapter(tag));
    const png = await upload(a.key, DOT_PNG);
    for (const method of ["GET", "HEAD", "DELETE"]) expect((await api(`/v1/assets/${text.hash}`, { method, key: b.key })).status).toBe(404);
    const list = (await (await api("/v1/assets", { key: b.key })).json()) as { data: unknown[]; usage: { files: number } };
    expect(list.data).toEqual([]);
    expect(list.usage.files).toBe(0);
    const res = await compileSync(b.key, { source: mainDoc(tag), files: [{ path: "chapters/one.tex", asset: text.hash }, { path: "img/dot.png", asset: png.hash }] });
    expect(res.status).toBe(422);
    expect([...((await errorOf(res)).assets as string[])].sort()).toEqual([text.hash, png.hash].sort());
    // A's are untouched by B's delete attempts
    expect((await api(`/v1/assets/${text.hash}`, { method: "HEAD", key: a.key })).status).toBe(200);
  });

  it("the same bytes uploaded by another account are its own new asset (201: no oracle of who holds what), stored apart and deleted apart", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const content = `shared bytes ${crypto.randomUUID()}`;
    const first = await upload(a.key, content);
    const second = await upload(b.key, content);
    expect([first.res.status, second.res.status]).toEqual([201, 201]);
    const rowA = (await assetRow(a.accountId, first.hash))!;
    const rowB = (await assetRow(b.accountId, first.hash))!;
    expect(rowA.id).not.toBe(rowB.id);
    // each under its account's prefix
    const keysOf = async (acc: string) => (await env.FILES.list({ prefix: `assets/${acc}/` })).objects.map((o) => o.key);
    expect(await keysOf(a.accountId)).toEqual([`assets/${a.accountId}/${rowA.id}`]);
    expect(await keysOf(b.accountId)).toEqual([`assets/${b.accountId}/${rowB.id}`]);
    expect((await api(`/v1/assets/${first.hash}`, { method: "DELETE", key: a.key })).status).toBe(204);
    expect((await api(`/v1/assets/${first.hash}`, { method: "HEAD", key: b.key })).status).toBe(200);
    expect(await keysOf(b.accountId)).toHaveLength(1);
  });

  it("a quota counts only the account's own assets", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const small = { ASSET_QUOTA_BYTES_PRO: "50" } as Partial<Env>;
    expect((await upload(a.key, "a".repeat(50), { overrides: small })).res.status).toBe(201);
    expect((await upload(b.key, "b".repeat(50), { overrides: small })).res.status).toBe(201);
  });

  it("without a key every asset route is a 401", async () => {
    const hash = "a".repeat(64);
    for (const [method, path] of [["PUT", `/v1/assets/${hash}`], ["GET", `/v1/assets/${hash}`], ["DELETE", `/v1/assets/${hash}`], ["GET", "/v1/assets"]] as const) {
      expect((await api(path, { method, ...(method === "PUT" ? { body: "x" } : {}) })).status).toBe(401);
    }
  });

  it("a declared length over the cap is refused before the body is read", async () => {
    const k = await createKey("pro");
    const body = new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(64 * 1024)) }); // never ends
    const res = await api(`/v1/assets/${"b".repeat(64)}`, { method: "PUT", key: k.key, body, headers: { "Content-Length": String(8 * 1024 * 1024) }, duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
  });

  it("an endless body is cut at the cap (413), not buffered", async () => {
    const k = await createKey("pro");
    const body = new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(64 * 1024)) });
    const res = await api(`/v1/assets/${"c".repeat(64)}`, { method: "PUT", key: k.key, body, duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
  });
});
