// Small shared pieces. Everything user-provided goes through JSX text (escaped by Preact), never
// through innerHTML.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, errorText } from "./api.ts";
import { onEvent, type StreamEvent } from "./events.ts";

export function navigate(to: string): void {
  history.pushState(null, "", to);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

export function Link(props: { href: string; children: ComponentChildren; current?: boolean; class?: string }) {
  return (
    <a
      href={props.href}
      class={props.class}
      aria-current={props.current ? "page" : undefined}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {errorText(error)}
    </p>
  );
}

export function FieldError({ error, path, id }: { error: unknown; path: string; id: string }) {
  if (!(error instanceof ApiFailure)) return null;
  const fields = error.fieldErrors();
  const key = Object.keys(fields).find((k) => k === path || k.startsWith(path + "."));
  if (!key) return null;
  return (
    <span class="field-error" id={id} role="alert">
      {fields[key]}
    </span>
  );
}

/** Runs an async action with a busy flag and its error kept for display. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  async function run<T>(fn: () => Promise<T>): Promise<T | undefined> {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, setError, run };
}

/** Loads once (and again when `deps` change), with reload(). */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let alive = true;
    fn().then(
      (d) => {
        if (alive) {
          setData(d);
          setError(null);
        }
      },
      (e) => alive && setError(e),
    );
    return () => {
      alive = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  return { data, setData, error, reload: () => setTick((t) => t + 1) };
}

/**
 * Polls while `active`: `refresh` after 1 s, then 2, 4, ... up to `maxMs` between calls, re-armed each
 * time one of `results` changes (a load's data or error), never while the tab is hidden (back in view:
 * soon again).
 * `restart()` goes back to the shortest wait (after the user changed something). `polling` is whether
 * a refresh is scheduled.
 */
export function usePollWhile(active: boolean, refresh: () => void, results: unknown[], maxMs = 10_000) {
  const [visible, setVisible] = useState(document.visibilityState !== "hidden");
  const wait = useRef(1000);
  useEffect(() => {
    const on = () => {
      const v = document.visibilityState !== "hidden";
      if (v) wait.current = 1000;
      setVisible(v);
    };
    document.addEventListener("visibilitychange", on);
    return () => document.removeEventListener("visibilitychange", on);
  }, []);
  const polling = active && visible;
  useEffect(() => {
    if (!polling) {
      if (!active) wait.current = 1000;
      return;
    }
    const t = setTimeout(refresh, wait.current);
    wait.current = Math.min(wait.current * 2, maxMs);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [polling, ...results]);
  return {
    polling,
    restart: () => {
      wait.current = 1000;
    },
  };
}

export function useEvents(handler: (e: StreamEvent) => void, deps: unknown[] = []) {
  useEffect(() => onEvent(handler), deps);
}

/** A secret shown once, with a copy button. */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="status">
      <p>
        <strong>{label}</strong> — shown only now. Copy it somewhere safe.
      </p>
      <code class="secret-value" data-testid="secret">
        {value}
      </code>
      <div class="row">
        <button
          type="button"
          onClick={() =>
            void navigator.clipboard?.writeText(value).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? "Copied" : "Copy"}
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status.toLowerCase().replace(/[^a-z]/g, "")}`}>{status}</span>;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/**
 * A list page's table: the load (or action) error above it, a caption for screen readers, one header
 * cell a column and, with `actions`, a last unlabelled column for the row buttons. The rows are the children.
 */
export function DataTable(props: { caption: string; columns: string[]; actions?: boolean; error: unknown; children: ComponentChildren }) {
  return (
    <>
      <ErrorBox error={props.error} />
      <div class="table-wrap">
        <table>
          <caption class="sr-only">{props.caption}</caption>
          <thead>
            <tr>
              {props.columns.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
              {props.actions && (
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>{props.children}</tbody>
        </table>
      </div>
    </>
  );
}
