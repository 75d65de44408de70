// shellEscape: documents that run programs (minted's pygmentize, epstopdf) compile when
// the request asks for it, and get a 422 that says so when it does not. The programs run
// in the job's sandbox: no network, nothing of the host outside the TeX installation.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { engineArgs } from "../src/engine.ts";
import { validateCompile } from "../src/validate.ts";
import { compile, expectPdf, pdfText } from "./helpers.ts";
import { sharedServer } from "./shared-server.ts";

const s = sharedServer();

const minted = [
  "\\documentclass{article}",
  "\\usepackage{minted}",
  "\\begin{document}",
  "\\begin{minted}{python}",
  "def greet(name):",
  '    return f"Hello, {name}!"',
  "\\end{minted}",
  "\\end{document}",
].join("\n");

/** A 1x1 cm filled square as EPS. */
const EPS = "%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 28 28\nnewpath 0 0 moveto 28 0 lineto 28 28 lineto 0 28 lineto closepath fill\nshowpage\n%%EOF\n";

describe("shellEscape", () => {
  it("minted: pygmentize runs with shellEscape; the code is in the PDF", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: minted, shellEscape: true });
    expectPdf(r);
    const t = pdfText(r.body);
    expect(t).toContain("def greet(name):");
    expect(t).toContain('return f"Hello, {name}!"');
  });

  it("minted without shellEscape: a 422 that says to turn it on", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: minted });
    expect(r.status).toBe(422);
    // minted 2 said "-shell-escape", minted 3 "not permitted with restricted shell escape"
    expect(r.json.error.message).toMatch(/-shell-escape|restricted shell escape/);
    expect(r.json.error.message).toContain('"shellEscape": true');
  });

  it("lualatex: minted runs through LuaTeX's os.execute", async () => {
    const r = await compile(s.url, { engine: "lualatex", source: minted, shellEscape: true });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("def greet(name):");
  });

  it("an EPS figure is converted for pdflatex (repstopdf, the restricted list) with and without shellEscape", async () => {
    const source = "\\documentclass{article}\\usepackage{graphicx}\\begin{document}Figure: \\includegraphics{fig.eps}\\end{document}";
    const files = [{ path: "fig.eps", content: EPS }];
    for (const shellEscape of [true, false]) {
      const r = await compile(s.url, { engine: "pdflatex", source, files, shellEscape });
      expectPdf(r);
      expect(pdfText(r.body)).not.toContain("fig.eps"); // not the placeholder with the file's name
      expect(r.body.toString("latin1")).toContain("/Subtype /Form"); // the converted figure, embedded
    }
  });

  it("without shellEscape only the restricted list runs: other programs are refused", async () => {
    const source = "\\documentclass{article}\\begin{document}\\immediate\\write18{echo ran > ran.txt}\\IfFileExists{ran.txt}{RAN}{REFUSED} \\the\\pdfshellescape\\end{document}";
    const r = await compile(s.url, { engine: "pdflatex", source });
    expectPdf(r);
    expect(pdfText(r.body)).toMatch(/REFUSED\s+2/);
  });

  it("programs (gnuplot, curl) run, get no network and see nothing of the host outside the job and the TeX installation", async () => {
    const source = [
      "\\documentclass{article}",
      "\\begin{document}",
      "\\immediate\\write18{curl -s -m 5 -o got.html http://example.com/; echo \"curl exit $?\" > curl.txt}",
      "\\immediate\\write18{python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), 3)' 2>/dev/null && echo CONNECTED > net.txt || echo NO-NETWORK > net.txt}",
      "\\immediate\\write18{cat /etc/passwd /etc/shadow /root/.profile > leak.txt 2>/dev/null; ls /home /root >> leak.txt 2>/dev/null; echo END >> leak.txt}",
      "\\immediate\\write18{ls .. | tr '\\string\\n' ' ' > above.txt}",
      "\\immediate\\write18{gnuplot -e 'print 6*7' > gnuplot.txt 2>&1}",
      "\\input{curl.txt} \\IfFileExists{got.html}{GOT-PAGE}{NO-PAGE}.",
      "GNUPLOT[\\input{gnuplot.txt}]",
      "\\input{net.txt}.",
      "LEAK[\\input{leak.txt}]",
      "ABOVE[\\input{above.txt}]",
      "\\end{document}",
    ].join("\n");
    const r = await compile(s.url, { engine: "pdflatex", source, shellEscape: true });
    expectPdf(r);
    const t = pdfText(r.body).replace(/\s+/g, " ");
    expect(t).toMatch(/curl exit [1-9]/);
    expect(t).toContain("NO-PAGE");
    expect(t).toContain("NO-NETWORK");
    expect(t).toMatch(/GNUPLOT\[42 ?\]/); // the programs documents call are there
    expect(t).toMatch(/LEAK\[END ?\]/);
    expect(t).not.toContain("root:");
    // the sandbox's root: the system's read-only directories and the job, no other job
    const above = /ABOVE\[([^\]]*)\]/.exec(t)?.[1]?.trim().split(" ") ?? [];
    expect(above).toContain("job");
    expect(above.filter((d) => !["bin", "dev", "etc", "job", "lib", "lib64", "opt", "proc", "sbin", "tmp", "usr", "var"].includes(d))).toEqual([]);
    expect(t).not.toContain("ABOVE[]");
  });

  it("a symlink a program plants where the server reads (the PDF, an index) is never followed", async () => {
    const source = [
      "\\documentclass{article}",
      "\\begin{document}",
      "Text.\\clearpage", // the PDF is open now: the engine goes on writing to the unlinked file
      "\\immediate\\write18{ln -sf /etc/passwd x.idx; rm -f main.pdf; ln -s /etc/passwd main.pdf}",
      "More text.",
      "\\end{document}",
    ].join("\n");
    const r = await compile(s.url, { engine: "pdflatex", source, shellEscape: true });
    expect(r.status).toBe(422);
    expect(r.json.error.message).toContain("No PDF was produced");
    expect(JSON.stringify(r.json)).not.toContain("root:");
  });

  it("is a boolean; turned off by COMPILE_SHELL_ESCAPE=off, and always without the sandbox", async () => {
    const bad = await compile(s.url, { engine: "pdflatex", source: minted, shellEscape: "yes" });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain("shellEscape: must be a boolean");
    expect(loadConfig({}).limits.shellEscape).toBe(true);
    for (const env of [{ COMPILE_SHELL_ESCAPE: "off" }, { COMPILE_SANDBOX: "off" }]) {
      const limits = loadConfig(env).limits;
      expect(limits.shellEscape).toBe(false);
      const v = validateCompile({ engine: "pdflatex", source: minted, shellEscape: true }, limits);
      expect(v.ok ? [] : v.issues.map((i) => i.path)).toEqual(["shellEscape"]);
    }
    expect(() => engineArgs("pdflatex", "/tmp/x", false, undefined, undefined, true)).toThrow("only in the sandbox");
  });
});
