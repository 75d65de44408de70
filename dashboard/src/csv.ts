// A small CSV reader for contact imports: RFC 4180 quoting, one pass over the text (linear), at most
// MAX_ROWS rows (the import endpoint takes 1,000 contacts a call).
export const MAX_ROWS = 1000;

/** At most `maxRows` non-empty rows; reading stops there. */
export function parseCsv(text: string, maxRows: number): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
      continue;
    }
    if (ch === '"' && field === "") quoted = true;
    else if (ch === ",") {
      row.push(field);
      field = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      field = "";
      if (row.some((f) => f !== "")) rows.push(row);
      row = [];
      if (rows.length >= maxRows) return rows;
    } else field += ch;
  }
  row.push(field);
  if (row.some((f) => f !== "")) rows.push(row);
  return rows;
}

export interface CsvContact {
  /** 1-based line of the CSV (header = 1). */
  line: number;
  contact: { phone: string; name?: string; email?: string; tags?: string[] };
}

/** Rows to contacts by the header's column names (phone required; name, email, tags optional; tags split on `;`). */
export function contactsFromCsv(text: string): { contacts: CsvContact[]; errors: Array<{ line: number; message: string }> } {
  // the header, the rows taken, and one more to know there were too many
  const rows = parseCsv(text, MAX_ROWS + 2);
  const errors: Array<{ line: number; message: string }> = [];
  const header = (rows[0] ?? []).map((h) => h.trim().toLowerCase());
  const col = (n: string) => header.indexOf(n);
  if (col("phone") < 0) return { contacts: [], errors: [{ line: 1, message: 'The first line must name the columns, with at least "phone" (and optionally name, email, tags).' }] };
  if (rows.length - 1 > MAX_ROWS) errors.push({ line: MAX_ROWS + 2, message: `At most ${MAX_ROWS} rows per import; the rest was not read.` });
  const contacts: CsvContact[] = [];
  rows.slice(1, MAX_ROWS + 1).forEach((r, i) => {
    const line = i + 2;
    const get = (n: string) => (col(n) >= 0 ? (r[col(n)] ?? "").trim() : "");
    const phone = get("phone");
    if (!phone) {
      errors.push({ line, message: "phone is empty" });
      return;
    }
    const c: CsvContact["contact"] = { phone };
    if (get("name")) c.name = get("name");
    if (get("email")) c.email = get("email");
    const tags = get("tags")
      .split(";")
      .map((t) => t.trim())
      .filter(Boolean);
    if (tags.length) c.tags = tags;
    contacts.push({ line, contact: c });
  });
  return { contacts, errors };
}
