import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiFailure, must, type ApiErrorBody, type Schemas } from "../api.ts";
import { createEditor, type LatexEditor } from "../editor.ts";
import { renderPdf } from "../pdf.ts";
import { JobProgress } from "../job-progress.tsx";
import { DataTable, ErrorBox, StatusBadge, useAction, useLoad, usePollWhile, when } from "../ui.tsx";

const SAMPLE = String.raw`\documentclass{article}
\usepackage{amsmath}
\title{Hello from the playground}
\begin{document}
\maketitle
\section{Maths}
Euler: $e^{i\pi} + 1 = 0$ and
\begin{equation}
  \int_0^\infty e^{-x^2}\,dx = \frac{\sqrt{\pi}}{2}.
\end{equation}
\end{document}
`;

type Engine = "pdflatex" | "xelatex" | "lualatex";
interface ExtraFile {
  path: string;
  content: string;
}

interface CompileProblem {
  code: string;
  message: string;
  line: number | null;
  file: string | null;
  log: string;
}

function problemOf(err: unknown): CompileProblem | null {
  if (!(err instanceof ApiFailure) || err.status !== 422) return null;
  const e = (err.body as ApiErrorBody).error as ApiErrorBody["error"] & { line?: number | null; file?: string | null; log?: string };
  return { code: e.code, message: e.message, line: typeof e.line === "number" ? e.line : null, file: e.file ?? null, log: typeof e.log === "string" ? e.log : "" };
}

export function Latex() {
  const host = useRef<HTMLDivElement>(null);
  const pdfHost = useRef<HTMLDivElement>(null);
  const editor = useRef<LatexEditor | null>(null);
  const [engine, setEngine] = useState<Engine>("pdflatex");
  const [files, setFiles] = useState<ExtraFile[]>([]);
  const [shellEscape, setShellEscape] = useState(false);
  const [problem, setProblem] = useState<CompileProblem | null>(null);
  const [pages, setPages] = useState<number | null>(null);
  const [ms, setMs] = useState<number | null>(null);
  const [renders, setRenders] = useState(0);
  /** The background job whose progress is shown (the last one queued, or one picked in the list). */
  const [following, setFollowing] = useState<string | null>(null);
  const act = useAction();
  const jobs = useLoad(() => must(api().GET("/v1/compile/jobs", { params: { query: { limit: 20 } } })));
  // Compile jobs are not on the event stream: the list is polled while one of them can still change.
  const unfinished = jobs.data?.data.some((j) => j.status === "queued" || j.status === "running") ?? false;
  const poll = usePollWhile(unfinished, jobs.reload, [jobs.data, jobs.error]);

  useEffect(() => {
    if (!host.current) return;
    editor.current = createEditor(host.current, SAMPLE, "LaTeX source", () => setProblem(null));
    return () => editor.current?.destroy();
  }, []);

  function request(): Schemas["CompileRequest"] {
    const extra = files.filter((f) => f.path.trim());
    return { source: editor.current?.text() ?? "", engine, ...(shellEscape ? { shellEscape } : {}), ...(extra.length ? { files: extra.map((f) => ({ path: f.path.trim(), content: f.content })) } : {}) };
  }

  async function show(pdf: ArrayBuffer) {
    if (!pdfHost.current) return;
    setPages(await renderPdf(pdf, pdfHost.current));
    setRenders((n) => n + 1);
  }

  async function compile() {
    setProblem(null);
    editor.current?.markError(null);
    const started = performance.now();
    await act.run(async () => {
      try {
        const pdf = await must(api().POST("/v1/compile/sync", { body: request(), parseAs: "arrayBuffer" }));
        setMs(Math.round(performance.now() - started));
        await show(pdf);
      } catch (err) {
        const p = problemOf(err);
        if (!p) throw err;
        setProblem(p);
        // A line in another file than the main one cannot be shown in this editor.
        if (p.line !== null && (!p.file || p.file === "main.tex")) editor.current?.markError(p.line);
      }
    });
  }

  async function compileAsync() {
    const job = await act.run(() => must(api().POST("/v1/compile/async", { body: request() })));
    if (job) {
      setFollowing(job.id);
      poll.restart();
      jobs.reload();
    }
  }

  async function openJob(j: Schemas["CompileJob"]) {
    await act.run(async () => show(await must(api().GET("/v1/compile/jobs/{id}/pdf", { params: { path: { id: j.id } }, parseAs: "arrayBuffer" }))));
  }

  return (
    <section class="latex">
      <h1>LaTeX playground</h1>
      <div class="row wrap">
        <label for="tex-engine">Engine</label>
        <select id="tex-engine" value={engine} onChange={(e) => setEngine(e.currentTarget.value as Engine)}>
          <option value="pdflatex">pdflatex</option>
          <option value="xelatex">xelatex</option>
          <option value="lualatex">lualatex</option>
        </select>
        <label class="check">
          <input type="checkbox" checked={shellEscape} onChange={(e) => setShellEscape(e.currentTarget.checked)} /> Shell escape (minted; sandboxed)
        </label>
        <button type="button" onClick={() => void compile()} disabled={act.busy}>
          {act.busy ? "Compiling…" : "Compile"}
        </button>
        <button type="button" class="secondary" onClick={() => void compileAsync()} disabled={act.busy}>
          Compile in the background
        </button>
      </div>
      <div class="latex-layout">
        <div>
          <div ref={host} class="editor" />
          {problem && (
            <div class="error" role="alert" data-testid="compile-error">
              <p>
                {problem.code}
                {problem.line !== null ? ` at line ${problem.line}` : ""}
                {problem.file ? ` of ${problem.file}` : ""}: {problem.message}
              </p>
              {problem.log && (
                <details>
                  <summary>Log</summary>
                  <pre class="log">{problem.log}</pre>
                </details>
              )}
            </div>
          )}
          <ErrorBox error={act.error} />
          <details class="card">
            <summary>Extra files ({files.length})</summary>
            {files.map((f, i) => (
              <div key={i} class="stack">
                <label for={`xf-path-${i}`}>Path</label>
                <input id={`xf-path-${i}`} value={f.path} placeholder="refs.bib" onInput={(e) => setFiles(files.map((x, j) => (j === i ? { ...x, path: e.currentTarget.value } : x)))} />
                <label for={`xf-content-${i}`}>Content</label>
                <textarea id={`xf-content-${i}`} rows={4} value={f.content} onInput={(e) => setFiles(files.map((x, j) => (j === i ? { ...x, content: e.currentTarget.value } : x)))} />
                <button type="button" class="danger" onClick={() => setFiles(files.filter((_, j) => j !== i))}>
                  Remove {f.path || "file"}
                </button>
              </div>
            ))}
            <button type="button" class="secondary" onClick={() => setFiles([...files, { path: "", content: "" }])}>
              Add a file
            </button>
          </details>
        </div>
        <div>
          <p role="status" aria-live="polite">
            {pages !== null ? `${pages} page(s)${ms !== null ? ` in ${ms} ms` : ""}` : "Compile to see the PDF."}
          </p>
          <div ref={pdfHost} class="pdf" data-testid="pdf" data-renders={renders} />
        </div>
      </div>
      <h2>Background jobs</h2>
      {following && <JobProgress id={following} onDone={jobs.reload} />}
      <div class="row wrap">
        <button type="button" class="secondary" onClick={jobs.reload}>
          Refresh jobs
        </button>
        <span class="muted" role="status" data-testid="jobs-live" data-polling={String(poll.polling)}>
          {poll.polling ? "Updating while jobs run…" : ""}
        </span>
      </div>
      <DataTable caption="Compile jobs" columns={["Job", "Engine", "Status", "Created", "Pages"]} actions error={jobs.error}>
        {jobs.data?.data.map((j) => (
          <tr key={j.id}>
            <td>
              <code>{j.id}</code>
            </td>
            <td>{j.engine}</td>
            <td>
              <StatusBadge status={j.status} />
              {j.error && <span class="muted"> {j.error.message}</span>}
            </td>
            <td>{when(j.createdAt)}</td>
            <td>{j.pages ?? "—"}</td>
            <td>
              {(j.status === "queued" || j.status === "running") && j.id !== following && (
                <button type="button" class="secondary" onClick={() => setFollowing(j.id)}>
                  Follow
                </button>
              )}
              {j.status === "succeeded" && (
                <button type="button" class="secondary" onClick={() => void openJob(j)}>
                  Show PDF
                </button>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}
