import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "../helpers.ts";
import { compileSync, insertJob, type JobBody, submit, uniqueDoc, waitForJob } from "./helpers.ts";

describe("compile: account isolation", () => {
  it("another account's key gets 404 for the job and its PDF, and does not see it listed", async () => {
    const owner = await createKey("pro");
    const other = await createKey("pro");
    const created = (await (await submit(owner.key, { source: uniqueDoc("iso") })).json()) as JobBody;
    const job = await waitForJob(owner.key, created.id);
    expect(job.status).toBe("succeeded");

    const status = await api(`/v1/compile/jobs/${job.id}`, { key: other.key });
    expect(status.status).toBe(404);
    expect((await errorOf(status)).code).toBe("not_found");
    const pdf = await api(`/v1/compile/jobs/${job.id}/pdf`, { key: other.key });
    expect(pdf.status).toBe(404);
    expect((await errorOf(pdf)).code).toBe("not_found");
    const list = (await (await api("/v1/compile/jobs", { key: other.key })).json()) as { data: JobBody[] };
    expect(list.data.map((j) => j.id)).not.toContain(job.id);

    // A second key of the owner's account does see it.
    const sibling = await createKey("pro", { accountId: owner.accountId });
    expect((await api(`/v1/compile/jobs/${job.id}/pdf`, { key: sibling.key })).status).toBe(200);
  });

  it("the result cache is per account: the same document is a MISS for another account", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const source = uniqueDoc("shared");
    const first = await compileSync(a.key, { source });
    await first.arrayBuffer();
    const hitA = await compileSync(a.key, { source });
    expect(hitA.headers.get("X-Cache")).toBe("HIT");
    await hitA.arrayBuffer();
    const missB = await compileSync(b.key, { source });
    expect(missB.headers.get("X-Cache")).toBe("MISS");
    expect(missB.headers.get("ETag")).not.toBe(first.headers.get("ETag"));
    await missB.arrayBuffer();
  });

  it("an Idempotency-Key of one account does not replay for another", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const body = { source: uniqueDoc("idem-iso") };
    const ja = (await (await submit(a.key, body, { "Idempotency-Key": "same" })).json()) as JobBody;
    const jb = (await (await submit(b.key, body, { "Idempotency-Key": "same" })).json()) as JobBody;
    expect(jb.id).not.toBe(ja.id);
  });

  it("the same Idempotency-Key with another body is 422 idempotency_key_reused", async () => {
    const k = await createKey("pro");
    await (await compileSync(k.key, { source: uniqueDoc("k1") }, { "Idempotency-Key": "k" })).arrayBuffer();
    const res = await compileSync(k.key, { source: uniqueDoc("k2") }, { "Idempotency-Key": "k" });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).code).toBe("idempotency_key_reused");
  });
});

describe("compile: untrusted input", () => {
  it("refuses callback URLs to private, loopback-looking and credentialed hosts when loopback is not allowed", async () => {
    const k = await createKey("pro");
    const { checkTargetUrl } = await import("../../../src/platform/safe-url.ts");
    for (const url of ["http://example.com/hook", "https://user:pw@example.com/hook", "https://192.168.1.10/hook", "https://[::1]/hook", "https://metadata.internal/x"]) {
      expect(checkTargetUrl(url, { allowLoopback: false }).ok, url).toBe(false);
      // Tests run with WEBHOOK_ALLOW_LOOPBACK=1 (as `npm run dev` does), so only non-loopback ones are refused here.
      if (!url.startsWith("http://") && !url.includes("[::1]")) {
        const res = await submit(k.key, { source: uniqueDoc("cb"), callbackUrl: url });
        expect(res.status, url).toBe(400);
      }
    }
  });

  it("a document cannot read files outside its directory (\\input of an absolute path fails)", async () => {
    const k = await createKey("pro");
    const res = await compileSync(k.key, { source: `% ${crypto.randomUUID()}\n\\documentclass{article}\\begin{document}\\input{/etc/passwd}\\end{document}` });
    expect(res.status).toBe(422);
    const err = await errorOf(res);
    expect(String(err.log ?? "")).not.toMatch(/root:x:0:0/);
  });

  it("the callback secret is shown only in the 202, never in reads or lists", async () => {
    const k = await createKey("pro");
    const created = (await (await submit(k.key, { source: uniqueDoc("secret"), callbackUrl: "https://example.com/hook" })).json()) as JobBody;
    expect(created.callbackSecret).toMatch(/^whsec_/);
    const read = await (await api(`/v1/compile/jobs/${created.id}`, { key: k.key })).text();
    const list = await (await api("/v1/compile/jobs", { key: k.key })).text();
    expect(read).not.toContain(created.callbackSecret!);
    expect(list).not.toContain(created.callbackSecret!);
    expect(read).not.toContain("callbackSecret");
  });

  it("a job id of another account in a queue message is ignored", async () => {
    const { runCompileJob } = await import("../../../src/compile/consumer.ts");
    const owner = await createKey("pro");
    const id = await insertJob(env, owner.accountId, uniqueDoc("forged"));
    await runCompileJob(env, { jobId: id, accountId: "acc_someoneelse" });
    const job = (await (await api(`/v1/compile/jobs/${id}`, { key: owner.key })).json()) as JobBody;
    expect(job).toMatchObject({ status: "queued", attempts: 0 });
  });
});
