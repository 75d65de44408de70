// A background compile as it runs: its status, pass and tools, the tail of its log, and a Stop
// button, from GET /v1/compile/jobs/{id}/events (read with fetch: EventSource cannot send the key).
import { useEffect, useState } from "preact/hooks";
import { api, must, storedKey, type Schemas } from "./api.ts";
import { ErrorBox, StatusBadge } from "./ui.tsx";

/** Log lines kept on screen (the newest). */
const MAX_LINES = 200;
/** Reconnects of one job's stream (each after the server ended it without `done`). */
const MAX_RECONNECTS = 20;
const FINAL = new Set(["succeeded", "failed", "cancelled"]);

interface Sse {
  id?: string;
  event: string;
  data: Record<string, unknown>;
}

interface Progress {
  status: string;
  pass: number | null;
  engine: string | null;
  tool: string | null;
  lines: string[];
  skipped: number;
  job: Schemas["CompileJob"] | null;
}

const START: Progress = { status: "queued", pass: null, engine: null, tool: null, lines: [], skipped: 0, job: null };

function apply(p: Progress, e: Sse): Progress {
  const d = e.data;
  switch (e.event) {
    case "status":
      return { ...p, status: String(d.status ?? d.state ?? p.status) };
    case "pass":
      return { ...p, status: "running", pass: Number(d.pass), engine: String(d.engine ?? ""), tool: null };
    case "tool":
      return { ...p, tool: String(d.tool) };
    case "log":
      return { ...p, lines: [...p.lines, String(d.line)].slice(-MAX_LINES) };
    case "log-skipped":
      return { ...p, skipped: p.skipped + Number(d.lines ?? 0) };
    case "gap":
      return { ...p, lines: [...p.lines, `… ${Number(d.missed)} events missed …`].slice(-MAX_LINES) };
    case "done":
      return { ...p, status: String(d.status), job: d as unknown as Schemas["CompileJob"] };
    default:
      return p;
  }
}

function parseBlock(block: string): Sse | undefined {
  let id: string | undefined;
  let event = "message";
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("id: ")) id = line.slice(4);
    else if (line.startsWith("event: ")) event = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (!data) return undefined;
  try {
    return { ...(id ? { id } : {}), event, data: JSON.parse(data) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

/** Reads the job's events until `done`, reconnecting with Last-Event-ID when a stream ends early. */
async function follow(id: string, signal: AbortSignal, onEvent: (e: Sse) => void): Promise<void> {
  let last: string | undefined;
  for (let attempt = 0; attempt <= MAX_RECONNECTS && !signal.aborted; attempt++) {
    const headers: Record<string, string> = { Authorization: `Bearer ${storedKey() ?? ""}` };
    if (last) headers["Last-Event-ID"] = last;
    const res = await fetch(`/v1/compile/jobs/${encodeURIComponent(id)}/events`, { headers, signal });
    if (!res.ok || !res.body) throw new Error(`The job's progress is not available (HTTP ${res.status}).`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += value;
      let end: number;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const e = parseBlock(buf.slice(0, end));
        buf = buf.slice(end + 2);
        if (!e) continue;
        if (e.id) last = e.id;
        onEvent(e);
        if (e.event === "done") return;
      }
      if (buf.length > 64 * 1024) buf = ""; // not events of ours
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export function JobProgress({ id, onDone }: { id: string; onDone: () => void }) {
  const [p, setP] = useState<Progress>(START);
  const [error, setError] = useState<unknown>(null);
  const [stopping, setStopping] = useState(false);

  useEffect(() => {
    setP(START);
    setError(null);
    const ac = new AbortController();
    follow(id, ac.signal, (e) => setP((prev) => apply(prev, e))).then(onDone, (err: unknown) => {
      if (!ac.signal.aborted) setError(err);
    });
    return () => ac.abort();
  }, [id]);

  async function stop() {
    setStopping(true);
    try {
      await must(api().DELETE("/v1/compile/jobs/{id}", { params: { path: { id } } }));
    } catch (err) {
      setError(err);
    } finally {
      setStopping(false);
    }
  }

  const finished = FINAL.has(p.status);
  const step = p.tool ? `running ${p.tool}` : p.pass !== null ? `pass ${p.pass}${p.engine ? ` of ${p.engine}` : ""}` : "";
  return (
    <div class="card stack" data-testid="job-progress" data-status={p.status}>
      <div class="row wrap">
        <strong>
          Job <code>{id}</code>
        </strong>
        <StatusBadge status={p.status} />
        <span class="muted" role="status" aria-live="polite" data-testid="job-step">
          {finished ? (p.job?.error?.message ?? (p.job?.pages ? `${p.job.pages} page(s)` : "")) : step}
        </span>
        {!finished && (
          <button type="button" class="danger" onClick={() => void stop()} disabled={stopping}>
            {stopping ? "Stopping…" : "Stop"}
          </button>
        )}
      </div>
      <ErrorBox error={error} />
      {(p.lines.length > 0 || p.skipped > 0) && (
        <details open={!finished}>
          <summary>Log ({p.lines.length} lines{p.skipped ? `, ${p.skipped} left out` : ""})</summary>
          <pre class="log" data-testid="job-log">
            {p.lines.join("\n")}
          </pre>
        </details>
      )}
    </div>
  );
}
