// Compile requests that once froze the whole compile server (backtracking scans of
// user text on its only thread), shared by the hostile tests and bench/hostile.
export const HELLO = "\\documentclass{article}\n\\begin{document}\nHello, world!\n\\end{document}\n";

export interface Attack {
  name: string;
  body: { engine: "pdflatex"; source: string; files?: Array<{ path: string; content: string }>; timeoutMs?: number };
}

/** A hello world with an uploaded 7 MiB main.bcf of `<bcf:datasource ` (and a .bib, so biber is considered). */
export function bcfFlood(): Attack {
  const bcf = '"<bcf:datasource '.repeat(Math.ceil((7 * 1024 * 1024) / 17));
  return {
    name: "7 MiB main.bcf",
    body: { engine: "pdflatex", source: HELLO, files: [{ path: "main.bcf", content: bcf }, { path: "refs.bib", content: "@misc{a, title={A}}\n" }] },
  };
}

/** Line 2 asks for a missing package in a way no scan sees; line 3 is 2 MiB of `\usepackage{`. */
export function usepackageFlood(): Attack {
  const line = "\\usepackage{".repeat(Math.ceil((2 * 1024 * 1024) / 12));
  return { name: "2 MiB \\usepackage{ line", body: { engine: "pdflatex", source: `\\documentclass{article}\n\\csname usepackage\\endcsname{nope}\n${line}\n\\begin{document}\nx\n\\end{document}\n` } };
}

/**
 * A document that writes about `mib` MiB of log (long lines full of what log
 * scanners look for: the bootstrap marker, "File `", file:line: prefixes) and then fails.
 */
export function bigLogFailure(mib = 6): Attack {
  return { name: `${mib} MiB log, then an error`, body: { engine: "pdflatex", source: bigLog(mib, "\\undefinedcommandafterthelog") } };
}

/**
 * About `mib` MiB of log as in bigLogFailure, then an endless loop that writes nothing: the
 * job ends only when something stops it (the log cap, when `mib` is over it, or the time limit).
 */
export function bigLogThenSpin(mib: number): Attack {
  return { name: `${mib} MiB log, then a silent loop`, body: { engine: "pdflatex", source: bigLog(mib, "\\def\\spin{\\spin}\\spin") } };
}

function bigLog(mib: number, then: string): string {
  // each \message adds 1 KiB; TeX wraps log lines at max_print_line (10,000)
  const unit = "\\string\\message\\string{TEXPOOL-READY\\string} File \\string`a.b:1: ./x.tex:2: l.3 ";
  const rounds = Math.ceil((mib * 1024 * 1024) / 1024);
  return [
    "\\documentclass{article}",
    `\\edef\\u{${unit}}\\edef\\u{\\u\\u}\\edef\\u{\\u\\u}\\edef\\u{\\u\\u}\\edef\\u{\\u\\u}`,
    "\\begin{document}",
    `\\count255=0 \\loop\\message{\\u}\\advance\\count255 by 1 \\ifnum\\count255<${rounds} \\repeat`,
    then,
    "\\end{document}",
  ].join("\n");
}

export const ATTACKS: ReadonlyArray<() => Attack> = [bcfFlood, usepackageFlood, () => bigLogFailure()];
