// SyncTeX both ways: a zip output's `<name>.synctex.gz` sent back to POST /synctex answers where a
// source line is in the PDF (forward) and which source line a point of the PDF comes from (reverse).
import { describe, expect, it } from "vitest";
import { compile } from "./helpers.ts";
import { unzip } from "./outputs-zip.ts";
import { sharedServer } from "./shared-server.ts";

const s = sharedServer();

/** The main file in paper/, page 2 from a chapter in paper/chapters/, another page from a file at the project root. */
const project = {
  mainPath: "paper/report.tex",
  source: "\\documentclass{article}\n\\begin{document}\nFirst page.\n\\newpage\n\\input{chapters/two}\n\\newpage\n\\input{../common/three}\n\\end{document}\n",
  files: [
    { path: "paper/chapters/two.tex", content: "% the chapter\n\nThe second page's own paragraph.\n" },
    { path: "common/three.tex", content: "Third page, from the project root.\n" },
  ],
};

type Position = { page?: number; x?: number; y?: number; width?: number; height?: number; file?: string | null; line?: number; column?: number };

async function synctexOf(): Promise<Buffer> {
  const r = await compile(s.url, { ...project, output: "zip", synctex: true });
  if (r.status !== 200) throw new Error(`compile: ${r.status} ${r.body.toString().slice(0, 500)}`);
  return unzip(r.body).read("report.synctex.gz");
}

async function query(gz: Buffer, q: Record<string, string | number>): Promise<{ status: number; json: any }> {
  const qs = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]));
  const r = await fetch(`${s.url}/synctex?${qs}`, { method: "POST", headers: { "content-type": "application/gzip" }, body: new Uint8Array(gz) });
  return { status: r.status, json: await r.json() };
}

describe("POST /synctex", () => {
  it("forward: a line of an included file is on its page; reverse: a point of that page is that line of that file", async () => {
    const gz = await synctexOf();
    const fwd = await query(gz, { file: "paper/chapters/two.tex", line: 3 });
    expect(fwd.status).toBe(200);
    const pos = fwd.json.positions as Position[];
    expect(pos.length).toBeGreaterThan(0);
    expect(pos[0]!.page).toBe(2);
    expect(pos[0]!.width).toBeGreaterThan(0);
    // the middle of the box found, back to the source
    const p = pos[0]!;
    const back = await query(gz, { page: 2, x: (p.x! + p.width! / 2).toFixed(2), y: (p.y! - 1).toFixed(2) });
    expect(back.status).toBe(200);
    expect(back.json.positions[0]).toMatchObject({ file: "paper/chapters/two.tex", line: 3 });
    // the main file itself, and a file reached with ..
    const main = await query(gz, { file: "paper/report.tex", line: 3 });
    expect(main.json.positions[0].page).toBe(1);
    const root = await query(gz, { file: "common/three.tex", line: 1 });
    expect(root.json.positions[0].page).toBe(3);
  });

  it("a line nothing was typeset from has no position; a file not in the project neither", async () => {
    const gz = await synctexOf();
    expect((await query(gz, { file: "nowhere.tex", line: 1 })).json).toEqual({ positions: [] });
  });

  it.each([
    [{ file: "a.tex" }, "line"],
    [{ file: "../a.tex", line: 1 }, "file"],
    [{ page: 1, x: 10 }, "y"],
    [{ page: 0, x: 1, y: 1 }, "page"],
    [{ page: 1, x: "1e9", y: 1 }, "x"],
    [{ file: "a.tex", line: 1, page: 1 }, ""],
  ])("%j is a 400 naming %s", async (q, field) => {
    const r = await query(Buffer.from("x"), q);
    expect(r.status).toBe(400);
    expect(r.json.error.details.issues.map((i: { path: string }) => i.path)).toContain(field);
  });

  it("a body that is not a SyncTeX file is a 400", async () => {
    const r = await query(Buffer.from("not gzip at all"), { page: 1, x: 1, y: 1 });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain("not a SyncTeX file");
  });
});
