// The output fields of a compile request (outputs.ts does the work): their values, defaults and
// the combinations that make sense. Plain code without Node imports: the Worker's schema checks
// requests with the same rules and messages, so both answer the same 400.

/** Where a field is wrong and why (validate.ts's Issue). */
export interface OutputIssue {
  path: string;
  message: string;
}

export const OUTPUTS = ["pdf", "png", "svg", "log", "zip"] as const;
export type OutputKind = (typeof OUTPUTS)[number];

/** Resolution of page images: dots per inch (an A4 page at 300 dpi is 2480 x 3508 pixels). */
export const MIN_DPI = 10;
export const MAX_DPI = 300;
export const DEFAULT_DPI = 150;
/** Pages rendered as images by one request. */
export const MAX_IMAGE_PAGES = 20;

export interface OutputSpec {
  kind: OutputKind;
  dpi: number;
  firstPage: number;
  /** Undefined: up to MAX_IMAGE_PAGES pages from firstPage, as far as the document goes. */
  lastPage?: number | undefined;
  /** Keep `<base>.synctex.gz` (in the zip output). */
  synctex: boolean;
}

export const DEFAULT_OUTPUT: OutputSpec = { kind: "pdf", dpi: DEFAULT_DPI, firstPage: 1, synctex: false };

export const OUTPUT_FIELDS = ["output", "dpi", "firstPage", "lastPage", "synctex"] as const;

const isInt = (v: unknown, min: number, max: number): v is number => typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;

/** The output fields of a request body; issues are pushed for bad values and for combinations that make no sense. */
export function parseOutput(b: Record<string, unknown>, issues: OutputIssue[]): OutputSpec {
  const out: OutputSpec = { ...DEFAULT_OUTPUT };
  if (b.output !== undefined) {
    if (typeof b.output !== "string" || !(OUTPUTS as readonly string[]).includes(b.output)) issues.push({ path: "output", message: `must be one of ${OUTPUTS.join(", ")}` });
    else out.kind = b.output as OutputKind;
  }
  const images = out.kind === "png" || out.kind === "svg";
  if (b.dpi !== undefined) {
    if (!isInt(b.dpi, MIN_DPI, MAX_DPI)) issues.push({ path: "dpi", message: `must be an integer from ${MIN_DPI} to ${MAX_DPI}` });
    else if (out.kind !== "png") issues.push({ path: "dpi", message: 'applies to "output": "png" only (SVG has no resolution)' });
    else out.dpi = b.dpi;
  }
  for (const k of ["firstPage", "lastPage"] as const) {
    if (b[k] === undefined) continue;
    if (!isInt(b[k], 1, 1_000_000)) issues.push({ path: k, message: "must be an integer from 1 to 1000000" });
    else if (!images) issues.push({ path: k, message: 'applies to "output": "png" or "svg" only' });
    else out[k] = b[k];
  }
  if (out.lastPage !== undefined) {
    if (out.lastPage < out.firstPage) issues.push({ path: "lastPage", message: "must not be before firstPage" });
    else if (out.lastPage - out.firstPage + 1 > MAX_IMAGE_PAGES) issues.push({ path: "lastPage", message: `at most ${MAX_IMAGE_PAGES} pages per request (firstPage to lastPage)` });
  }
  if (b.synctex !== undefined) {
    if (typeof b.synctex !== "boolean") issues.push({ path: "synctex", message: "must be a boolean" });
    else if (b.synctex && out.kind !== "zip") issues.push({ path: "synctex", message: 'the SyncTeX file is answered in the zip output: set "output": "zip"' });
    else out.synctex = b.synctex;
  }
  return out;
}

