// The query of a SyncTeX request (synctex.ts): a source position or a PDF position. Plain code
// without Node imports: the Worker checks its query with the same rule and messages.
import { pathIssue } from "./names.ts";

export type SynctexQuery = { kind: "forward"; file: string; line: number; column: number } | { kind: "reverse"; page: number; x: number; y: number };

const INT = /^\d{1,7}$/;
const NUM = /^\d{1,7}(?:\.\d{1,6})?$/;

/** The query of a request, or the issues with it. */
export function parseSynctexQuery(q: URLSearchParams): { ok: true; value: SynctexQuery } | { ok: false; issues: Array<{ path: string; message: string }> } {
  const issues: Array<{ path: string; message: string }> = [];
  const forward = q.has("file") || q.has("line") || q.has("column");
  const reverse = q.has("page") || q.has("x") || q.has("y");
  if (forward === reverse) return { ok: false, issues: [{ path: "", message: "give either file and line (and column) for a position in the PDF, or page, x and y for a place in the sources" }] };
  const int = (k: string, min: number, def?: number) => {
    const v = q.get(k);
    if (v === null && def !== undefined) return def;
    if (v === null || !INT.test(v) || Number(v) < min) issues.push({ path: k, message: `must be an integer of at least ${min}` });
    return Number(v);
  };
  if (forward) {
    const file = q.get("file") ?? "";
    const issue = pathIssue(file);
    if (issue) issues.push({ path: "file", message: issue });
    const line = int("line", 1);
    const column = int("column", 0, 0);
    return issues.length ? { ok: false, issues } : { ok: true, value: { kind: "forward", file, line, column } };
  }
  const page = int("page", 1);
  const num = (k: string) => {
    const v = q.get(k);
    if (v === null || !NUM.test(v)) issues.push({ path: k, message: "must be a number of PDF points (bp) from the page's top left corner, at least 0" });
    return Number(v);
  };
  const x = num("x");
  const y = num("y");
  return issues.length ? { ok: false, issues } : { ok: true, value: { kind: "reverse", page, x, y } };
}

