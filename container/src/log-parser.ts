// Parser for TeX logs written with -file-line-error and a wide max_print_line.
// Finds errors (with file and line), warnings (undefined references/citations,
// over/underfull boxes, package warnings), the page count and the log tail.

export interface LogError {
  message: string;
  file?: string;
  line?: number;
}

export type WarningKind =
  | "undefined_reference"
  | "undefined_citation"
  | "overfull_box"
  | "underfull_box"
  | "missing_character"
  | "font"
  | "package"
  | "latex";

export interface LogWarning {
  kind: WarningKind;
  message: string;
  file?: string;
  line?: number;
}

export interface ParsedLog {
  errors: LogError[];
  warnings: LogWarning[];
  pages?: number;
  /** true when the run ended at end of input without \end{document} */
  missingEnd: boolean;
}

const FILE_LINE = /^(\.{0,2}\/?[^:\s][^:]*?\.[A-Za-z0-9]+):(\d+): (.*)$/;
const CONTEXT_LINE = /^l\.(\d+) /;

function cleanFile(f: string): string {
  return f.replace(/^\.\//, "");
}

/** Joins a message split by TeX's own message wrapping (continuation lines of packages). */
function continuation(lines: string[], i: number, first: string): string {
  let msg = first;
  for (let j = i + 1; j < lines.length && j < i + 8; j++) {
    const l = lines[j] ?? "";
    const m = /^\([A-Za-z0-9@._-]+\)\s+(.*)$/.exec(l); // "(hyperref)     text" package continuation
    if (m) {
      msg += " " + (m[1] ?? "").trim();
      continue;
    }
    break;
  }
  return msg.trim();
}

export function parseLog(log: string): ParsedLog {
  const lines = log.split(/\r?\n/);
  const errors: LogError[] = [];
  const warnings: LogWarning[] = [];
  let pages: number | undefined;
  // end of input without \end{document}: TeX asks the (closed) terminal for more
  const missingEnd = log.includes("no legal \\end found") || /^! Emergency stop\.\r?\n<\*> /m.test(log);

  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] ?? "";
    let m: RegExpExecArray | null;

    if ((m = FILE_LINE.exec(l))) {
      const text = m[3] ?? "";
      if (/^ ?==> Fatal error occurred/.test(text)) continue;
      if (text === "Emergency stop." && errors.length > 0) continue;
      errors.push({ message: continuation(lines, i, text), file: cleanFile(m[1] ?? ""), line: Number(m[2]) });
      continue;
    }
    if (l.startsWith("! ")) {
      const text = l.slice(2).trim();
      if (/^ ?==> Fatal error occurred/.test(text)) continue;
      if (text === "Emergency stop." && errors.length > 0) continue;
      const e: LogError = { message: continuation(lines, i, text) };
      for (let j = i + 1; j < lines.length && j < i + 30; j++) {
        const c = CONTEXT_LINE.exec(lines[j] ?? "");
        if (c) {
          e.line = Number(c[1]);
          break;
        }
        const fl = FILE_LINE.exec(lines[j] ?? "");
        if (fl) {
          e.file = cleanFile(fl[1] ?? "");
          e.line = Number(fl[2]);
          break;
        }
      }
      if (e.file === undefined) {
        for (let j = i + 1; j < lines.length && j < i + 30; j++) {
          const fl = FILE_LINE.exec(lines[j] ?? "");
          if (fl) {
            e.file = cleanFile(fl[1] ?? "");
            break;
          }
        }
      }
      errors.push(e);
      continue;
    }
    if ((m = /^(?:LaTeX|Package \S+) Warning: (Reference|Citation) `([^']*)' on page \S+ undefined on input line (\d+)\.?/.exec(l))) {
      warnings.push({
        kind: m[1] === "Reference" ? "undefined_reference" : "undefined_citation",
        message: l.replace(/^.*?Warning: /, ""),
        line: Number(m[3]),
      });
      continue;
    }
    if ((m = /^LaTeX Warning: There were undefined (references|citations)\./.exec(l))) {
      warnings.push({ kind: m[1] === "references" ? "undefined_reference" : "undefined_citation", message: l.replace(/^.*?Warning: /, "") });
      continue;
    }
    if ((m = /^(Overfull|Underfull) \\[hv]box /.exec(l))) {
      const at = /at lines? (\d+)/.exec(l);
      warnings.push({
        kind: m[1] === "Overfull" ? "overfull_box" : "underfull_box",
        message: l.trim(),
        line: at ? Number(at[1]) : undefined,
      });
      continue;
    }
    if (l.startsWith("Missing character: ")) {
      warnings.push({ kind: "missing_character", message: l.trim() });
      continue;
    }
    if ((m = /^(LaTeX Font|LaTeX|Package \S+|Class \S+) Warning: (.*)$/.exec(l))) {
      const kind: WarningKind = m[1] === "LaTeX Font" ? "font" : m[1] === "LaTeX" ? "latex" : "package";
      const message = continuation(lines, i, m[2] ?? "");
      const onLine = /on input line (\d+)\.?$/.exec(message);
      warnings.push({ kind, message, line: onLine ? Number(onLine[1]) : undefined });
      continue;
    }
    if ((m = /^Output written on .*? \((\d+) pages?[,)]/.exec(l))) {
      pages = Number(m[1]);
      continue;
    }
  }

  if (missingEnd) {
    const e: LogError = { message: "Missing \\end{document}: the input ended before the document did.", file: "main.tex" };
    // an "Emergency stop." at <*> says nothing more useful
    const rest = errors.filter((x) => !/^Emergency stop\.$|^\*\*\* \(job aborted/.test(x.message));
    errors.length = 0;
    errors.push(e, ...rest);
  }
  return { errors, warnings, pages, missingEnd };
}

/** The last `maxBytes` bytes of the log, cut at a line start, without our bootstrap line. */
export function logTail(log: string, maxBytes: number): string {
  // hide the bootstrap line (it names server paths) wherever TeX echoes it
  const cleaned = log.replace(/\\message\{TEXPOOL-READY\}[^\n]*?\\texpoolgo/g, "main.tex");
  const buf = Buffer.from(cleaned, "utf8");
  if (buf.length <= maxBytes) return cleaned;
  let tail = buf.subarray(buf.length - maxBytes).toString("utf8");
  const nl = tail.indexOf("\n");
  if (nl >= 0 && nl < tail.length - 1) tail = tail.slice(nl + 1);
  return tail;
}

/** True when LaTeX or a package says another pass is needed. */
export function logAsksRerun(log: string): boolean {
  return /Rerun to get|Please rerun LaTeX|rerun LaTeX afterwards|Rerun LaTeX|may have changed\.\s*Rerun|Label\(s\) may have changed|Citation\(s\) may have changed|\(rerunfilecheck\)\s+Rerun/i.test(log);
}
