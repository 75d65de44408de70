// Compile assets: what is refused, and how (wrong hash, bad names, sizes, quota, unknown hashes).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { COMPILE_LIMITS as L } from "../../../src/compile/limits.ts";
import { api, createKey, errorOf } from "../helpers.ts";
import { zipOf } from "../../unit/archive-fixtures.ts";
import { assetKey } from "../../../src/compile/assets/store.ts";
import { assetRow, sha256, upload } from "./asset-helpers.ts";
import { compileSync, submit } from "./helpers.ts";

type Issues = { details: { issues: Array<{ path: string; message: string }> } };

describe("assets: uploads refused", () => {
  it("bytes that do not hash to the path are a 422 hash_mismatch naming both hashes, and nothing is stored", async () => {
    const k = await createKey("pro");
    const claimed = await sha256("something else");
    const { res } = await upload(k.key, "the real bytes", { as: claimed });
    expect(res.status).toBe(422);
    const err = await errorOf(res);
    expect(err).toMatchObject({ code: "hash_mismatch", expected: claimed, actual: await sha256("the real bytes") });
    expect(await assetRow(k.accountId, claimed)).toBeNull();
  });

  it.each([
    ["upper case", "A".repeat(64)],
    ["too short", "a".repeat(63)],
    ["too long", "a".repeat(65)],
    ["not hex", "g".repeat(64)],
    ["a path", "..%2F..%2Fjobs"],
  ])("a name that is not a SHA-256 (%s) is a 400 naming sha256", async (_, name) => {
    const k = await createKey("pro");
    for (const method of ["PUT", "GET", "DELETE"]) {
      const res = await api(`/v1/assets/${name}`, { method, key: k.key, ...(method === "PUT" ? { body: "x" } : {}) });
      expect(res.status).toBe(400);
      expect(((await errorOf(res)) as unknown as Issues).details.issues.map((i) => i.path)).toEqual(["sha256"]);
    }
  });

  it("over the size of one project file is a 413, by its declared length or its bytes", async () => {
    const k = await createKey("pro");
    const big = new Uint8Array(L.maxAssetBytes + 1);
    const { res } = await upload(k.key, big);
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe("payload_too_large");
    const exact = new Uint8Array(L.maxAssetBytes).fill(7);
    expect((await upload(k.key, exact)).res.status).toBe(201);
  });

  it("past the plan's quota of bytes or of assets is a 409 asset_quota_exceeded with the usage; deleting makes room", async () => {
    const k = await createKey("pro");
    const small = { ASSET_QUOTA_BYTES_PRO: "100", ASSET_QUOTA_FILES_PRO: "2" } as Partial<Env>;
    const a = await upload(k.key, "a".repeat(60), { overrides: small });
    expect(a.res.status).toBe(201);
    const b = await upload(k.key, "b".repeat(60), { overrides: small });
    expect(b.res.status).toBe(409);
    expect(await errorOf(b.res)).toMatchObject({ code: "asset_quota_exceeded", sizeBytes: 60, usedBytes: 60, usedFiles: 1, quotaBytes: 100, quotaFiles: 2 });
    expect(await assetRow(k.accountId, b.hash)).toBeNull();
    // the same asset again is no new bytes: still 200
    expect((await upload(k.key, "a".repeat(60), { overrides: small })).res.status).toBe(200);
    expect((await upload(k.key, "c".repeat(40), { overrides: small })).res.status).toBe(201);
    const d = await upload(k.key, "d", { overrides: small });
    expect(d.res.status).toBe(409);
    expect(await errorOf(d.res)).toMatchObject({ code: "asset_quota_exceeded", usedFiles: 2, quotaFiles: 2 });
    expect((await api(`/v1/assets/${a.hash}`, { method: "DELETE", key: k.key })).status).toBe(204);
    expect((await upload(k.key, "b".repeat(60), { overrides: small })).res.status).toBe(201);
  });

  it("parallel uploads cannot pass the quota together", async () => {
    const k = await createKey("pro");
    const small = { ASSET_QUOTA_BYTES_PRO: "100" } as Partial<Env>;
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => upload(k.key, `${i}`.repeat(40), { overrides: small })));
    const statuses = results.map((r) => r.res.status).sort();
    expect(statuses).toEqual([201, 201, 409, 409, 409, 409]);
    const { n } = (await env.DB.prepare("SELECT coalesce(sum(size_bytes), 0) AS n FROM compile_assets WHERE account_id = ?").bind(k.accountId).first<{ n: number }>())!;
    expect(n).toBe(80);
  });

  it("GET, HEAD and DELETE of a hash the account has no asset for are 404", async () => {
    const k = await createKey("pro");
    const hash = await sha256(crypto.randomUUID());
    for (const method of ["GET", "HEAD", "DELETE"]) expect((await api(`/v1/assets/${hash}`, { method, key: k.key })).status).toBe(404);
  });
});

describe("assets in compiles: refused", () => {
  it("unknown hashes are a 422 unknown_assets listing every one, sync and async", async () => {
    const k = await createKey("pro");
    const known = await upload(k.key, `known ${crypto.randomUUID()}`);
    const u1 = await sha256(crypto.randomUUID());
    const u2 = await sha256(crypto.randomUUID());
    const body = { source: "\\documentclass{article}\\begin{document}x\\end{document}", files: [{ path: "a.tex", asset: u1 }, { path: "b.tex", asset: known.hash }, { path: "c.tex", asset: u2 }, { path: "d.tex", asset: u1 }] };
    for (const res of [await compileSync(k.key, body), await submit(k.key, body)]) {
      expect(res.status).toBe(422);
      const err = await errorOf(res);
      expect(err.code).toBe("unknown_assets");
      expect([...(err.assets as string[])].sort()).toEqual([u1, u2].sort());
    }
    const jobs = (await (await api("/v1/compile/jobs", { key: k.key })).json()) as { data: unknown[] };
    expect(jobs.data).toEqual([]);
  });

  it.each([
    ["both content and asset", { path: "a.tex", content: "x", asset: "a".repeat(64) }],
    ["neither", { path: "a.tex" }],
    ["a malformed hash", { path: "a.tex", asset: "nope" }],
  ])("a file with %s is a 400", async (_, file) => {
    const k = await createKey("pro");
    const res = await compileSync(k.key, { source: "x", files: [file] });
    expect(res.status).toBe(400);
    expect(((await errorOf(res)) as unknown as Issues).details.issues[0]!.path).toMatch(/^files\.0\./);
  });

  it("assets count toward the files limit and the bytes limit (413 before any asset is read)", async () => {
    const k = await createKey("pro");
    const one = await upload(k.key, `one ${crypto.randomUUID()}`);
    const many = Array.from({ length: L.maxFiles + 1 }, (_, i) => ({ path: `f${i}.tex`, asset: one.hash }));
    const tooMany = await compileSync(k.key, { source: "x", files: many });
    expect(tooMany.status).toBe(413);
    expect(await errorOf(tooMany)).toMatchObject({ code: "payload_too_large", limit: "files" });

    const big = await upload(k.key, new Uint8Array(L.maxAssetBytes).fill(1));
    expect(big.res.status).toBe(201);
    // its object gone: were it read before the sizes were checked, the answer would be 422 unknown_assets
    await env.FILES.delete(assetKey(k.accountId, (await assetRow(k.accountId, big.hash))!.id));
    const tooBig = await compileSync(k.key, { source: "x", files: [{ path: "big.bin", asset: big.hash }] });
    expect(tooBig.status).toBe(413);
    expect(await errorOf(tooBig)).toMatchObject({ code: "payload_too_large", limit: "totalBytes" });
    // twice the same asset is twice its bytes in the project
    const half = await upload(k.key, new Uint8Array(L.maxTotalBytes / 2).fill(2));
    const twice = await compileSync(k.key, { source: "x", files: [{ path: "a.bin", asset: half.hash }, { path: "b.bin", asset: half.hash }] });
    expect(twice.status).toBe(413);
  });

  it("a path named twice (an archive's file and an asset) is a 400; options.files with content is a 400", async () => {
    const k = await createKey("pro");
    const a = await upload(k.key, `x ${crypto.randomUUID()}`);
    const send = (options: unknown) => {
      const form = new FormData();
      form.set("archive", new File([zipOf({ "main.tex": "\\documentclass{article}\\begin{document}x\\end{document}", "x.tex": "x" })], "p.zip"));
      form.set("options", JSON.stringify(options));
      return api("/v1/compile/sync", { method: "POST", key: k.key, body: form });
    };
    const dup = await send({ files: [{ path: "x.tex", asset: a.hash }] });
    expect(dup.status).toBe(400);
    const inline = await send({ files: [{ path: "y.tex", content: "y" }] });
    expect(inline.status).toBe(400);
    expect(((await errorOf(inline)) as unknown as Issues).details.issues[0]!.path).toBe("options.files");
  });
});
