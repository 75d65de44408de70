// Compile assets: uploaded once under their SHA-256, named by hash in compiles (JSON, async, multipart).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expireAssets } from "../../../src/compile/assets/expiry.ts";
import { assetKey } from "../../../src/compile/assets/store.ts";
import { handleScheduled } from "../../../src/scheduled.ts";
import { api, createKey } from "../helpers.ts";
import { zipOf } from "../../unit/archive-fixtures.ts";
import { ageAsset, assetRow, chapter, DOT_PNG, mainDoc, sha256, upload } from "./asset-helpers.ts";
import { compileSync, isPdf, submit, waitForJob } from "./helpers.ts";

type AssetView = { sha256: string; sizeBytes: number; createdAt: string; lastUsedAt: string; expiresAt: string | null };
const DAY = 86_400_000;

describe("assets: upload, metadata, list, delete", () => {
  it("PUT stores once (201, then 200); GET and HEAD see it; DELETE removes it", async () => {
    const k = await createKey("pro");
    const content = `asset ${crypto.randomUUID()}`;
    const first = await upload(k.key, content);
    expect(first.res.status).toBe(201);
    expect(first.res.headers.get("Location")).toBe(`/v1/assets/${first.hash}`);
    const view = (await first.res.json()) as AssetView;
    expect(view).toMatchObject({ sha256: first.hash, sizeBytes: content.length });
    expect(Date.parse(view.expiresAt!) - Date.parse(view.lastUsedAt)).toBe(30 * DAY);

    // curl --data-binary's default type is a form's: the body is the bytes whatever the type says
    const again = await upload(k.key, content, { headers: { "Content-Type": "application/x-www-form-urlencoded" } });
    expect(again.res.status).toBe(200);
    expect(((await again.res.json()) as AssetView).createdAt).toBe(view.createdAt);

    const got = await api(`/v1/assets/${first.hash}`, { key: k.key });
    expect(got.status).toBe(200);
    expect(got.headers.get("ETag")).toBe(`"${first.hash}"`);
    expect(((await got.json()) as AssetView).sizeBytes).toBe(content.length);
    const head = await api(`/v1/assets/${first.hash}`, { method: "HEAD", key: k.key });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");

    const row = await assetRow(k.accountId, first.hash);
    const obj = await env.FILES.get(assetKey(k.accountId, row!.id));
    expect(await obj!.text()).toBe(content);

    const del = await api(`/v1/assets/${first.hash}`, { method: "DELETE", key: k.key });
    expect(del.status).toBe(204);
    expect((await api(`/v1/assets/${first.hash}`, { method: "HEAD", key: k.key })).status).toBe(404);
    expect(await env.FILES.head(assetKey(k.accountId, row!.id))).toBeNull();
    expect(await assetRow(k.accountId, first.hash)).toBeNull();
  });

  it("an upload that never finished is no asset (404), and the next upload of the bytes completes it in its place", async () => {
    const k = await createKey("pro");
    const content = `unfinished ${crypto.randomUUID()}`;
    const hash = await sha256(content);
    const id = `ast_${crypto.randomUUID()}`;
    await env.DB.prepare("INSERT INTO compile_assets (id, account_id, sha256, size_bytes, created_at, last_used_at, stored_at) VALUES (?, ?, ?, ?, ?, ?, NULL)")
      .bind(id, k.accountId, hash, content.length, Date.now(), Date.now())
      .run();
    expect((await api(`/v1/assets/${hash}`, { method: "HEAD", key: k.key })).status).toBe(404);
    const res = await compileSync(k.key, { source: "x", files: [{ path: "a.tex", asset: hash }] });
    expect(res.status).toBe(422);
    expect((await upload(k.key, content)).res.status).toBe(201);
    expect(await (await env.FILES.get(assetKey(k.accountId, id)))!.text()).toBe(content);
    expect((await assetRow(k.accountId, hash))!.stored_at).not.toBeNull();
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM compile_assets WHERE account_id = ?").bind(k.accountId).first<{ n: number }>())!;
    expect(n).toBe(1);
  });

  it("lists newest first in pages, with the account's usage against its plan", async () => {
    const k = await createKey("free");
    const hashes: string[] = [];
    let bytes = 0;
    for (let i = 0; i < 3; i++) {
      const content = `file ${i} ${crypto.randomUUID()}`;
      bytes += content.length;
      const { res, hash } = await upload(k.key, content);
      expect(res.status).toBe(201);
      hashes.push(hash);
      await new Promise((r) => setTimeout(r, 2)); // ids are time-ordered to the millisecond
    }
    type Page = { data: AssetView[]; nextCursor: string | null; usage: { bytes: number; files: number; quotaBytes: number; quotaFiles: number } };
    const p1 = (await (await api("/v1/assets?limit=2", { key: k.key })).json()) as Page;
    expect(p1.data.map((a) => a.sha256)).toEqual([hashes[2], hashes[1]]);
    expect(p1.usage).toEqual({ bytes, files: 3, quotaBytes: 100 * 1024 * 1024, quotaFiles: 1000 });
    const p2 = (await (await api(`/v1/assets?limit=2&cursor=${p1.nextCursor}`, { key: k.key })).json()) as Page;
    expect(p2.data.map((a) => a.sha256)).toEqual([hashes[0]]);
    expect(p2.nextCursor).toBeNull();
  });
});

describe("assets in compiles", () => {
  it("a sync compile takes a text and a binary asset in place of content, and marks them used", async () => {
    const k = await createKey("pro");
    const tag = crypto.randomUUID();
    const text = await upload(k.key, chapter(tag));
    const png = await upload(k.key, DOT_PNG);
    expect([text.res.status, png.res.status]).toEqual([201, 201]);
    await ageAsset(k.accountId, text.hash, Date.now() - 10 * DAY);
    const res = await compileSync(k.key, {
      source: mainDoc(tag),
      files: [
        { path: "chapters/one.tex", asset: text.hash },
        { path: "img/dot.png", asset: png.hash },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Compile-Pages")).toBe("2");
    expect(isPdf(await res.arrayBuffer())).toBe(true);
    expect((await assetRow(k.accountId, text.hash))!.last_used_at).toBeGreaterThan(Date.now() - 60_000);
  });

  it("the same project with the files inline and as assets gives the same PDF pages", async () => {
    const k = await createKey("pro");
    const tag = crypto.randomUUID();
    const text = await upload(k.key, chapter(tag));
    const png = await upload(k.key, DOT_PNG);
    const inline = await compileSync(k.key, {
      source: mainDoc(tag),
      files: [
        { path: "chapters/one.tex", content: chapter(tag) },
        { path: "img/dot.png", content: btoa(String.fromCharCode(...DOT_PNG)), encoding: "base64" },
      ],
    });
    const byHash = await compileSync(k.key, { source: mainDoc(tag), files: [{ path: "chapters/one.tex", asset: text.hash }, { path: "img/dot.png", asset: png.hash }] });
    expect([inline.status, byHash.status]).toEqual([200, 200]);
    expect(byHash.headers.get("X-Compile-Pages")).toBe(inline.headers.get("X-Compile-Pages"));
    await Promise.all([inline.arrayBuffer(), byHash.arrayBuffer()]);
  });

  it("an async job reads its assets at submission: deleting one afterwards does not fail the job", async () => {
    const k = await createKey("pro");
    const tag = crypto.randomUUID();
    const text = await upload(k.key, chapter(tag));
    const png = await upload(k.key, DOT_PNG);
    const res = await submit(k.key, { source: mainDoc(tag), files: [{ path: "chapters/one.tex", asset: text.hash }, { path: "img/dot.png", asset: png.hash }] });
    expect(res.status).toBe(202);
    expect((await api(`/v1/assets/${text.hash}`, { method: "DELETE", key: k.key })).status).toBe(204);
    const job = await waitForJob(k.key, ((await res.json()) as { id: string }).id, 40_000);
    expect(job.status).toBe("succeeded");
    expect(job.pages).toBe(2);
  });

  it("a multipart compile adds the assets named in options.files to the archive's files", async () => {
    const k = await createKey("pro");
    const tag = crypto.randomUUID();
    const text = await upload(k.key, chapter(tag));
    const png = await upload(k.key, DOT_PNG);
    const form = new FormData();
    form.set("archive", new File([zipOf({ "main.tex": mainDoc(tag) })], "project.zip"));
    form.set("options", JSON.stringify({ files: [{ path: "chapters/one.tex", asset: text.hash }, { path: "img/dot.png", asset: png.hash }] }));
    const res = await api("/v1/compile/sync", { method: "POST", key: k.key, body: form });
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Compile-Pages")).toBe("2");
    await res.arrayBuffer();
  });
});

describe("assets: idle expiry", () => {
  it("the cron deletes assets unused for ASSET_IDLE_DAYS, least recently used first, and uploads that never finished", async () => {
    const k = await createKey("pro");
    const now = Date.now();
    const old = await upload(k.key, `old ${crypto.randomUUID()}`);
    const fresh = await upload(k.key, `fresh ${crypto.randomUUID()}`);
    await ageAsset(k.accountId, old.hash, now - 31 * DAY);
    await ageAsset(k.accountId, fresh.hash, now - 29 * DAY);
    const oldRow = await assetRow(k.accountId, old.hash);
    // an upload whose Worker died between its row and its object
    await env.DB.prepare("INSERT INTO compile_assets (id, account_id, sha256, size_bytes, created_at, last_used_at, stored_at) VALUES (?, ?, ?, 5, ?, ?, NULL)")
      .bind(`ast_${crypto.randomUUID()}`, k.accountId, "a".repeat(64), now - 2 * 3600_000, now - 2 * 3600_000)
      .run();
    // through the Worker's cron, as deployed
    await handleScheduled({ scheduledTime: now } as ScheduledController, env);
    expect((await api(`/v1/assets/${old.hash}`, { method: "HEAD", key: k.key })).status).toBe(404);
    expect(await env.FILES.head(assetKey(k.accountId, oldRow!.id))).toBeNull();
    expect((await api(`/v1/assets/${fresh.hash}`, { method: "HEAD", key: k.key })).status).toBe(200);
    expect(await assetRow(k.accountId, "a".repeat(64))).toBeNull();
  });

  it("an asset used by a compile starts its idle time again", async () => {
    const k = await createKey("pro");
    const now = Date.now();
    const tag = crypto.randomUUID();
    const text = await upload(k.key, chapter(tag));
    const png = await upload(k.key, DOT_PNG);
    await ageAsset(k.accountId, text.hash, now - 29.9 * DAY);
    const res = await compileSync(k.key, { source: mainDoc(tag), files: [{ path: "chapters/one.tex", asset: text.hash }, { path: "img/dot.png", asset: png.hash }] });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    await expireAssets(env, now + 0.2 * DAY);
    expect((await api(`/v1/assets/${text.hash}`, { method: "HEAD", key: k.key })).status).toBe(200);
  });
});
