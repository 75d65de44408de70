// SyncTeX through the API: a job compiled with a zip output and synctex answers positions both
// ways at GET /v1/compile/jobs/{id}/synctex; other jobs and bad queries get clear 4xx.
import { describe, expect, it } from "vitest";
import { synctexEntry } from "../../src/compile/synctex.ts";
import { api, createKey, errorOf } from "./helpers.ts";
import { type JobBody, submit, uniqueDoc, waitForJob } from "./compile/helpers.ts";

const project = () => ({
  mainPath: "paper/report.tex",
  source: `% ${crypto.randomUUID()}\n\\documentclass{article}\n\\begin{document}\nFirst page.\n\\newpage\n\\input{chapters/two}\n\\end{document}\n`,
  files: [{ path: "paper/chapters/two.tex", content: "% the chapter\n\nThe second page's own paragraph.\n" }],
});

type Positions = { positions: Array<{ page?: number; x?: number; y?: number; width?: number; file?: string | null; line?: number }> };

async function job(key: string, body: unknown): Promise<JobBody> {
  const created = (await (await submit(key, body)).json()) as JobBody;
  const done = await waitForJob(key, created.id, 60_000);
  expect(done.status).toBe("succeeded");
  return done;
}

describe("GET /v1/compile/jobs/{id}/synctex", () => {
  it("forward finds the page of an included file's line; reverse brings a point of it back to that line", async () => {
    const k = await createKey("pro");
    const j = await job(k.key, { ...project(), output: "zip", synctex: true });
    const fwd = await api(`/v1/compile/jobs/${j.id}/synctex?file=${encodeURIComponent("paper/chapters/two.tex")}&line=3`, { key: k.key });
    expect(fwd.status).toBe(200);
    const box = ((await fwd.json()) as Positions).positions[0]!;
    expect(box.page).toBe(2);
    const back = await api(`/v1/compile/jobs/${j.id}/synctex?page=2&x=${(box.x! + box.width! / 2).toFixed(2)}&y=${(box.y! - 1).toFixed(2)}`, { key: k.key });
    expect(back.status).toBe(200);
    expect(((await back.json()) as Positions).positions[0]).toMatchObject({ file: "paper/chapters/two.tex", line: 3 });
  });

  it("a job without a SyncTeX file is a 409 no_synctex; a bad query a 400; another account's job a 404", async () => {
    const k = await createKey("pro");
    const plain = await job(k.key, { source: uniqueDoc("no-synctex") });
    const res = await api(`/v1/compile/jobs/${plain.id}/synctex?page=1&x=1&y=1`, { key: k.key });
    expect(res.status).toBe(409);
    expect((await errorOf(res)).code).toBe("no_synctex");
    for (const q of ["file=a.tex", "page=1&x=1", "file=../x.tex&line=1", "file=a.tex&line=1&page=1", ""]) {
      const bad = await api(`/v1/compile/jobs/${plain.id}/synctex?${q}`, { key: k.key });
      expect(bad.status, q).toBe(400);
      expect((await errorOf(bad)).code).toBe("invalid_request");
    }
    const other = await createKey("pro");
    expect((await api(`/v1/compile/jobs/${plain.id}/synctex?page=1&x=1&y=1`, { key: other.key })).status).toBe(404);
  });
});

describe("synctexEntry", () => {
  it("finds a stored .synctex.gz in a zip and nothing in bytes that are not one", () => {
    // a zip of two stored entries, as the compile server writes them
    const entry = (name: string, data: number[], offset: number) => {
      const n = new TextEncoder().encode(name);
      const local = new Uint8Array(30 + n.length + data.length);
      const lv = new DataView(local.buffer);
      lv.setUint32(0, 0x04034b50, true);
      lv.setUint32(18, data.length, true);
      lv.setUint32(22, data.length, true);
      lv.setUint16(26, n.length, true);
      local.set(n, 30);
      local.set(data, 30 + n.length);
      const central = new Uint8Array(46 + n.length);
      const cv = new DataView(central.buffer);
      cv.setUint32(0, 0x02014b50, true);
      cv.setUint32(20, data.length, true);
      cv.setUint32(24, data.length, true);
      cv.setUint16(28, n.length, true);
      cv.setUint32(42, offset, true);
      central.set(n, 46);
      return { local, central };
    };
    const a = entry("r.pdf", [1, 2, 3], 0);
    const b = entry("r.synctex.gz", [31, 139, 8, 9], a.local.length);
    const dirAt = a.local.length + b.local.length;
    const end = new Uint8Array(22);
    const ev = new DataView(end.buffer);
    ev.setUint32(0, 0x06054b50, true);
    ev.setUint16(8, 2, true);
    ev.setUint16(10, 2, true);
    ev.setUint32(12, a.central.length + b.central.length, true);
    ev.setUint32(16, dirAt, true);
    const zip = new Uint8Array([...a.local, ...b.local, ...a.central, ...b.central, ...end]);
    expect([...synctexEntry(zip)!]).toEqual([31, 139, 8, 9]);
    expect(synctexEntry(new Uint8Array(10))).toBeUndefined();
    expect(synctexEntry(zip.subarray(0, zip.length - 1))).toBeUndefined();
  });
});
