// Precompiled preambles, the cache around them: the processes a format's verification leaves, the
// bound on formats kept, the fallback from a broken one, the background dumps (in the account's
// slots, at low priority, never a tool) and which preambles are taken at all. Each part with a
// server of its own configuration; the comparisons of PDFs are in preamble.test.ts.
import { promises as fs, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOW_PRIORITY } from "../src/fairness.ts";
import { MAX_PREAMBLE_CHARS, preambleOf } from "../src/preamble.ts";
import type { RunningServer } from "../src/server.ts";
import { compile, doc, expectPdf, fixture, pdfText, testServer } from "./helpers.ts";
import { editBody } from "./preamble-lanes.ts";

const bib = fixture("refs.bib");

describe("processes started from a format", () => {
  /**
   * Sandboxes whose command line names `text` (their bwrap names the format's host path; its
   * forked init repeats that command line, so only processes whose parent is not one are counted).
   */
  const running = (text: string) => {
    const found = new Map<string, string>();
    for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
      try {
        const [state, ppid] = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]!.split(" ");
        if (state !== "Z" && readFileSync(`/proc/${p}/cmdline`, "utf8").includes(text)) found.set(p, ppid!);
      } catch {
        /* gone meanwhile */
      }
    }
    return [...found].filter(([, ppid]) => !found.has(ppid)).map(([p]) => p);
  };

  it("verifying a new format leaves only the one kept warm; closing the server leaves none", { timeout: 120_000 }, async () => {
    const jobRoot = path.join(os.tmpdir(), `texcompile-verify-${process.pid}`);
    const own = await testServer({ jobRoot, preamble: { warm: 1 } as never, poolSize: { pdflatex: 1, xelatex: 0, lualatex: 0 } as never });
    try {
      expectPdf(await compile(own.url, { engine: "pdflatex", source: fixture("medium.tex"), namespace: "acct-verify" }));
      await own.preambles.idle();
      // the discarded process goes a moment after the dump's check (later on a busy machine); one
      // that stays is a leak: the count must reach one and stay there
      await expect.poll(() => running(`${jobRoot}/preambles/`).length, { interval: 50, timeout: 20_000 }).toBe(1);
      await new Promise((r) => setTimeout(r, 300));
      expect(running(`${jobRoot}/preambles/`)).toHaveLength(1);
    } finally {
      await own.close();
    }
    // the killed process may take a moment to be gone on a busy machine; a kept one never goes
    await expect.poll(() => running(`${jobRoot}/preambles/`).length, { interval: 50, timeout: 10_000 }).toBe(0);
  });
});

describe("bounded cache, fallback (no warm processes)", () => {
  let small: RunningServer;
  beforeAll(async () => {
    // its own job root: the formats directory is counted below
    const jobRoot = path.join(os.tmpdir(), `texcompile-small-${process.pid}`);
    small = await testServer({ jobRoot, preamble: { maxEntries: 2, warm: 0 } as never, poolSize: { pdflatex: 1, xelatex: 0, lualatex: 0 } as never });
  });
  afterAll(async () => {
    await small?.close();
  });

  it("keeps at most PREAMBLE_CACHE_ENTRIES formats, least recently used out first", async () => {
    for (const pkg of ["amsmath", "amssymb", "xcolor"]) {
      await compile(small.url, { engine: "pdflatex", source: doc("x", `\\usepackage{${pkg}}\n`), namespace: "n" });
      await small.preambles.idle();
    }
    const st = small.preambles.stats();
    expect(st.entries).toBeLessThanOrEqual(2);
    expect(st.dumped).toBe(3);
    const files = await fs.readdir(path.join(small.config.jobRoot, "preambles"));
    expect(files.length).toBeLessThanOrEqual(2);
    // the oldest (amsmath) went; the newest is still used
    const newest = await compile(small.url, { engine: "pdflatex", source: doc("y", "\\usepackage{xcolor}\n"), namespace: "n" });
    expect(newest.headers.get("x-compile-preamble")).toBe("hit");
    const oldest = await compile(small.url, { engine: "pdflatex", source: doc("y", "\\usepackage{amsmath}\n"), namespace: "n" });
    expect(oldest.headers.get("x-compile-preamble")).toBe("miss");
  });

  it("a format that fails falls back to the normal path and is dropped", async () => {
    const src = doc("Fallback body.", "\\usepackage{amsmath}\n");
    await compile(small.url, { engine: "pdflatex", source: src, namespace: "acct-broken" });
    await small.preambles.idle();
    // break the format on disk (as a disk fault or a TeX update would)
    const dir = path.join(small.config.jobRoot, "preambles");
    for (const f of await fs.readdir(dir)) {
      await fs.chmod(path.join(dir, f), 0o644);
      await fs.writeFile(path.join(dir, f), "not a format");
    }
    const r = await compile(small.url, { engine: "pdflatex", source: editBody(src), namespace: "acct-broken" });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("Fallback body.");
    expect(r.headers.get("x-compile-preamble")).toBeNull();
    const again = await compile(small.url, { engine: "pdflatex", source: src, namespace: "acct-broken" });
    expectPdf(again);
    expect(again.headers.get("x-compile-preamble")).toBe("miss");
  });

});

describe("background work: in the account's slots, at low priority, without tools", () => {
  let one: RunningServer;
  const jobRoot = path.join(os.tmpdir(), `texcompile-bg-${process.pid}`);
  beforeAll(async () => {
    // one compile slot: a dump may only take it when it is free and no request waits
    one = await testServer({ jobRoot, engines: ["pdflatex"], maxConcurrent: 1, preamble: { warm: 0 } as never, poolSize: { pdflatex: 1 } as never });
  });
  afterAll(async () => {
    await one?.close();
  });

  /**
   * The nice values of this server's dump processes: the sandbox the server started (its parent
   * is this process; its command line names the job root and mylatexformat). What the sandbox
   * starts inherits its value, or is demoted a moment later if it forked first.
   */
  const dumpNices = () => {
    const nices: number[] = [];
    for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
      try {
        const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8");
        const stat = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]!.split(" ");
        if (cmd.includes(jobRoot) && cmd.includes("mylatexformat") && Number(stat[1]) === process.pid) nices.push(Number(stat[16]));
      } catch {
        /* gone meanwhile */
      }
    }
    return nices;
  };

  it("a dump waits while every compile slot is held, then runs in one, at nice 19", { timeout: 120_000 }, async () => {
    const hold = await one.gate.acquire("other");
    // x's compile waits behind the test's hold, then "another" request waits behind x's: when x
    // ends, its slot goes straight to that request, and x's dump finds none free
    const x = compile(one.url, { engine: "pdflatex", source: doc("X", "\\usepackage{xcolor}\n"), namespace: "acct-x" });
    await expect.poll(() => one.gate.stats().queued, { interval: 10, timeout: 10_000 }).toBe(1);
    const next = one.gate.acquire("another");
    hold();
    expectPdf(await x);
    const release = await next;
    const seen: number[] = [];
    for (const until = Date.now() + 4_000; Date.now() < until; ) {
      seen.push(...dumpNices());
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).toEqual([]); // no dump while the slot is held (before: it ran after 2 s anyway)
    expect(one.preambles.stats().dumped).toBe(0);
    release();
    for (let i = 0; i < 500 && seen.length === 0 && one.preambles.stats().dumped === 0; i++) {
      seen.push(...dumpNices());
      await new Promise((r) => setTimeout(r, 5));
    }
    await one.preambles.idle();
    expect(one.preambles.stats().dumped).toBe(1);
    expect(seen.length).toBeGreaterThan(0);
    for (const n of seen) expect(n).toBe(LOW_PRIORITY);
  });

  it("a document that runs a tool is not dumped (no bibtex in the background)", { timeout: 60_000 }, async () => {
    const before = one.preambles.stats().dumped;
    const body = { engine: "pdflatex", namespace: "acct-bib", source: doc("See \\cite{knuth84}.\n\\bibliographystyle{plain}\n\\bibliography{refs}", "\\usepackage{amsmath}\n"), files: [{ path: "refs.bib", content: bib }] };
    const r = await compile(one.url, body);
    expectPdf(r);
    expect(r.headers.get("x-compile-tools")).toBe("bibtex");
    await one.preambles.idle();
    expect(one.preambles.stats().dumped).toBe(before);
    expect(one.preambles.stats().lastRefusal).toMatch(/runs bibtex/);
  });

  it("a project file the preamble reads may not do what the preamble may not, under any spelling", { timeout: 60_000 }, async () => {
    const before = one.preambles.stats().dumped;
    const body = {
      engine: "pdflatex",
      namespace: "acct-dep",
      source: "\\documentclass{article}\n\\usepackage{amsmath}\n\\input{macros}\n\\begin{document}\nx\n\\end{document}\n",
      files: [{ path: "macros.tex", content: "\\csname newwrite\\endcsname\\f \\csname immediate\\endcsname\\csname openout\\endcsname\\f=x.out\n" }],
    };
    expectPdf(await compile(one.url, body));
    await one.preambles.idle();
    expect(one.preambles.stats().dumped).toBe(before);
    expect(one.preambles.stats().lastRefusal).toMatch(/macros\.tex.*csname/);
  });
});

describe("preambleOf", () => {
  it.each([
    ["\\documentclass{article}\n\\usepackage{x}\n\\begin{document}\nx\n\\end{document}", "\\documentclass{article}\n\\usepackage{x}\n"],
    ["\\documentclass{article}\n\\begin{document}\nx\n\\end{document}", undefined], // no packages
    ["\\documentclass{article}\\usepackage{x}\\begin{document}x\\end{document}", undefined], // preamble shares the line
    ["\\documentclass{article}\n\\usepackage{x}\n\\immediate\\write18{x}\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{x}\n\\begin{filecontents}{a.tex}\nx\n\\end{filecontents}\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{glossaries}\n\\makeglossaries\n\\begin{document}\n", undefined],
    ["\\usepackage{x}\n\\begin{document}\n", undefined], // no \documentclass
    ["\\documentclass{article}\n", undefined], // no \begin{document}
    // the same primitives under other spellings: names built at run time, ^^ notation, environments
    ["\\documentclass{article}\n\\usepackage{x}\n\\csname immediate\\endcsname\\csname write\\endcsname18{touch x}\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{x}\n\\expandafter\\let\\expandafter\\w\\csname wr\\string ite\\endcsname\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{x}\n\\ifcsname wr ite\\endcsname\\fi\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{x}\n\\^^77rite18{x}\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{x}\n\\begin{immediate}\\begin{write}18{x}\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{x}\n\\end{input}\n\\begin{document}\n", undefined], // \endinput
    ["\\documentclass{article}\n\\usepackage{x}\n\\def\\e{write}\\begin{\\e}18{x}\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{x}\n\\makeatletter\\@nameuse{openout}\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{etoolbox}\n\\csuse{special}{x}\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{x}\n\\UseName{openout}\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{x}\n\\ExplSyntaxOn \\use:c{openout}\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{x}\n\\makeatletter\\protected@write\\@auxout{}{x}\n\\begin{document}\n", undefined],
    ["\\documentclass{article}\n\\usepackage{x}\n\\scantokens{\\def\\x{y}}\n\\begin{document}\n", undefined],
    // what preambles usually hold still is taken
    [
      "\\documentclass{article}\n\\usepackage{x}\n\\newenvironment{note}{\\begin{center}\\itshape}{\\end{center}}\n\\makeatletter\\renewcommand\\@seccntformat[1]{}\\makeatother\n\\newcommand\\R{\\mathbb{R}}\\\\ 50\\%\n\\begin{document}\n",
      "\\documentclass{article}\n\\usepackage{x}\n\\newenvironment{note}{\\begin{center}\\itshape}{\\end{center}}\n\\makeatletter\\renewcommand\\@seccntformat[1]{}\\makeatother\n\\newcommand\\R{\\mathbb{R}}\\\\ 50\\%\n",
    ],
  ])("%j", (source, expected) => {
    expect(preambleOf(source)).toBe(expected);
  });

  it("leaves preambles longer than MAX_PREAMBLE_CHARS to the normal path (it scans no further)", () => {
    const head = "\\documentclass{article}\n\\usepackage{x}\n";
    const fill = (n: number) => `%${"\\usepackage{".repeat(Math.ceil(n / 12)).slice(0, n - 2)}\n`;
    const justUnder = head + fill(MAX_PREAMBLE_CHARS - head.length);
    expect(justUnder.length).toBe(MAX_PREAMBLE_CHARS);
    expect(preambleOf(`${justUnder}\\begin{document}\nx\n\\end{document}\n`)).toBe(justUnder);
    const over = head + fill(MAX_PREAMBLE_CHARS + 1 - head.length);
    expect(preambleOf(`${over}\\begin{document}\nx\n\\end{document}\n`)).toBeUndefined();
    expect(preambleOf(`${head}${fill(2 * 1024 * 1024)}\\begin{document}\nx\n\\end{document}\n`)).toBeUndefined();
  });
});
