// Compile requests that once froze the whole compile server (backtracking scans of
// user text on its only thread) or escaped a job's bounds, shared by the hostile tests and
// bench/hostile.
export const HELLO = "\\documentclass{article}\n\\begin{document}\nHello, world!\n\\end{document}\n";

export interface Attack {
  name: string;
  body: { engine: "pdflatex"; source: string; files?: Array<{ path: string; content: string }>; timeoutMs?: number; shellEscape?: boolean; mainPath?: string };
  /**
   * The answers the server may give it now, as "status code" ("422 compile_error", "200"): every
   * answer the bench gets must be one of them, and an error's message must contain `message` if
   * given. Without it: any 4xx.
   */
  expect?: { answers: string[]; message?: string };
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

/**
 * A biblatex source map whose replacement biber would evaluate as Perl (`@{[ ... ]}` in a
 * replace= is interpolated): the document's text would run a program outside TeX. Single
 * quotes: biblatex copies a `"` into the .bcf unescaped, which is refused as malformed XML
 * before the replacement itself is looked at.
 */
export function biberSourcemapCode(): Attack {
  const source = [
    "\\documentclass{article}",
    "\\usepackage[backend=biber]{biblatex}",
    "\\addbibresource{refs.bib}",
    "\\DeclareSourcemap{\\maps[datatype=bibtex]{\\map{\\step[fieldsource=title, match=\\regexp{(.+)}, replace={@{[ system('sleep 5') ]}}]}}}",
    "\\begin{document}",
    "\\cite{a}",
    "\\printbibliography",
    "\\end{document}",
  ].join("\n");
  return {
    name: "biber source map with Perl in replace=",
    body: { engine: "pdflatex", source, files: [{ path: "refs.bib", content: "@misc{a, title={A}}\n" }] },
    expect: { answers: ["422 compile_error"], message: "biber:" },
  };
}

/**
 * With shell escape, the first pass moves the main file's folder away and puts a file in
 * its place, so that the next pass (asked for by \tableofcontents) would follow whatever the
 * document left there.
 */
export function renamesOwnFolder(): Attack {
  const source = [
    "\\documentclass{article}",
    "\\begin{document}",
    "\\immediate\\write18{cd /job && [ -e s2 ] || { mv s s2 && echo x > s; }}",
    "\\tableofcontents\\section{A}",
    "\\end{document}",
  ].join("\n");
  return {
    name: "job renames its own folder (shell escape)",
    body: { engine: "pdflatex", source, mainPath: "s/main.tex", shellEscape: true },
    expect: { answers: ["422 compile_error"], message: "replaced its main file's folder" },
  };
}

/**
 * A failed compile whose log names a missing file " " and whose source has 21 comment lines
 * of 12,000 blanks: finding the line that asked for the file was once quadratic in them.
 */
export function missingBlankFile(): Attack {
  // TeX skips the comment lines; \errmessage stops the run with "./main.tex:24: File ` ' not found."
  const source = `\\documentclass{article}\n${`% \\input ${" ".repeat(12_000)}\n`.repeat(21)}\\begin{document}\n\\errmessage{File \`\\space' not found}\n\\end{document}\n`;
  return { name: 'missing file " " after 21 lines of 12,000 blanks', body: { engine: "pdflatex", source }, expect: { answers: ["422 compile_error"], message: "File ` ' not found" } };
}

/**
 * With shell escape, 3,000 background processes of 5 s each. The job's process cap makes the
 * shell fail to fork ("Cannot fork") and give up, the document then finishes (a PDF), and the
 * sandbox ends the sleeps it left with the job; on a slow machine the time limit may end it first.
 */
export function processFlood(): Attack {
  const source = "\\documentclass{article}\n\\begin{document}\n\\immediate\\write18{for i in $(seq 1 3000); do sleep 5 & done; wait}\nx\n\\end{document}\n";
  return {
    name: "3,000 background processes (shell escape)",
    body: { engine: "pdflatex", source, shellEscape: true, timeoutMs: 5000 },
    expect: { answers: ["200", "422 compile_timeout", "422 compile_error"] },
  };
}

export const ATTACKS: ReadonlyArray<() => Attack> = [bcfFlood, usepackageFlood, () => bigLogFailure(), biberSourcemapCode, renamesOwnFolder, missingBlankFile, processFlood];
