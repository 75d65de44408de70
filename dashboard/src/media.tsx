// A chat message's file shown as itself: images and stickers as thumbnails (a click shows them full
// size), video and audio with the browser's own controls, documents as a download link with name and
// size. The bytes come only from this API's `GET /api/messages/{id}/media`, which needs the Bearer
// header: so they are read as a blob and shown through an object URL, revoked when the message leaves
// the page. A URL a message carries (media sent by link) never goes into a src or href: it is text.
import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiFailure, errorText, must, type Schemas } from "./api.ts";

type Message = Schemas["Message"];
type FileType = "image" | "sticker" | "video" | "audio" | "document";

const NOUN: Record<FileType, string> = { image: "image", sticker: "sticker", video: "video", audio: "audio", document: "document" };

/**
 * Types the browser shows without running anything. Anything else (an inbound file's type is what the
 * sender's server said: it could be HTML or SVG) becomes opaque bytes, so an object URL of it, which
 * has this page's origin, can never be a document that runs script here.
 */
const SHOWN = new Set([
  "image/jpeg",
  "image/png",
  "image/webp",
  "image/gif",
  "video/mp4",
  "video/3gpp",
  "video/webm",
  "audio/aac",
  "audio/amr",
  "audio/mpeg",
  "audio/mp4",
  "audio/ogg",
  "audio/webm",
]);

/** While the file is still being received: tries at most this many times, waiting 1 s, 2 s, ... up to 15 s. */
const PENDING_TRIES = 40;
const PENDING_MAX_WAIT_MS = 15_000;

/** At most this many downloads at once: each is an API call that counts against the rate limit. */
const PARALLEL = 3;
let running = 0;
const waiting: Array<() => void> = [];

async function inSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (running < PARALLEL) running++;
  else await new Promise<void>((r) => waiting.push(r)); // the slot is handed over by the one that ends
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/** The file of a message from the API, typed so the browser only ever shows it passively (`opaque`: never shown). */
export async function mediaBlob(id: string, signal?: AbortSignal, opaque = false): Promise<Blob> {
  const blob = (await inSlot(() => must(api().GET("/api/messages/{id}/media", { params: { path: { id } }, parseAs: "blob", ...(signal ? { signal } : {}) })))) as unknown as Blob;
  const type = (blob.type.split(";")[0] ?? "").trim().toLowerCase();
  return blob.slice(0, blob.size, !opaque && SHOWN.has(type) ? type : "application/octet-stream");
}

export function formatSize(bytes: number | null | undefined): string {
  if (typeof bytes !== "number" || !(bytes >= 0)) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Becomes true once the element is near the viewport (then stays true): files load when scrolled to. */
function useSeen(ref: RefObject<HTMLElement | null>): boolean {
  const [seen, setSeen] = useState(typeof IntersectionObserver === "undefined");
  useEffect(() => {
    if (seen || !ref.current) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        setSeen(true);
        io.disconnect();
      }
    }, { rootMargin: "300px" });
    io.observe(ref.current);
    return () => io.disconnect();
  }, [seen]);
  return seen;
}

type Load = { state: "loading" } | { state: "pending" } | { state: "ready"; url: string } | { state: "failed"; message: string } | { state: "error"; message: string };

/**
 * The object URL of a message's file, fetched once `start` is true. A file still being received
 * (409 `media_pending`) is asked for again with backoff, never while the tab is hidden, and at once
 * when a newer copy of the message has another media `status`; the URL is revoked (and a download
 * under way aborted) when the message goes.
 */
function useMediaUrl(id: string, start: boolean, status: string | undefined, retry: number): Load {
  const [load, setLoad] = useState<Load>(status === "pending" ? { state: "pending" } : { state: "loading" });
  useEffect(() => {
    if (!start) return;
    const ctrl = new AbortController();
    let url: string | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let wait = 1000;
    let tries = 0;
    const later = () => {
      timer = setTimeout(attempt, wait);
      wait = Math.min(wait * 2, PENDING_MAX_WAIT_MS);
    };
    async function attempt(): Promise<void> {
      if (document.visibilityState === "hidden") return later();
      tries++;
      try {
        const blob = await mediaBlob(id, ctrl.signal);
        if (ctrl.signal.aborted) return;
        url = URL.createObjectURL(blob);
        setLoad({ state: "ready", url });
      } catch (err) {
        if (ctrl.signal.aborted) return;
        if (err instanceof ApiFailure && err.code === "media_pending" && tries < PENDING_TRIES) {
          setLoad({ state: "pending" });
          return later();
        }
        if (err instanceof ApiFailure && err.code === "media_failed") setLoad({ state: "failed", message: err.message });
        else setLoad({ state: "error", message: errorText(err) });
      }
    }
    void attempt();
    return () => {
      ctrl.abort();
      clearTimeout(timer);
      if (url) URL.revokeObjectURL(url);
    };
  }, [id, start, status, retry]);
  return load;
}

function FullSize({ url, alt, onClose }: { url: string; alt: string; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    // Escape closes a modal dialog by itself; a click on the backdrop (the dialog, not its content) too.
    <dialog ref={ref} class="media-full" aria-label={alt} onClose={onClose} onClick={(e) => e.target === e.currentTarget && ref.current?.close()}>
      <img src={url} alt={alt} />
      <button type="button" class="secondary" onClick={() => ref.current?.close()}>
        Close
      </button>
    </dialog>
  );
}

function Thumb({ url, alt }: { url: string; alt: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" class="media-thumb" aria-label={`${alt}: show full size`} onClick={() => setOpen(true)}>
        <img src={url} alt={alt} />
      </button>
      {open && <FullSize url={url} alt={alt} onClose={() => setOpen(false)} />}
    </>
  );
}

function Inline({ m, type }: { m: Message; type: Exclude<FileType, "document"> }) {
  const box = useRef<HTMLDivElement>(null);
  const seen = useSeen(box);
  const [retry, setRetry] = useState(0);
  const load = useMediaUrl(m.id, seen, m.media?.status, retry);
  const label = m.media?.caption || m.media?.filename || NOUN[type];
  let body;
  switch (load.state) {
    case "ready":
      body =
        type === "video" ? (
          <video src={load.url} controls preload="metadata" aria-label={label} />
        ) : type === "audio" ? (
          <audio src={load.url} controls preload="metadata" aria-label={label} />
        ) : (
          <Thumb url={load.url} alt={label} />
        );
      break;
    case "loading":
      body = <span class="media-placeholder">Loading the {NOUN[type]}…</span>;
      break;
    case "pending":
      body = <span class="media-placeholder">Receiving the {NOUN[type]}…</span>;
      break;
    case "failed":
      body = <span class="media-placeholder media-problem">{load.message}</span>;
      break;
    case "error":
      body = (
        <span class="media-placeholder media-problem">
          The {NOUN[type]} could not be loaded ({load.message}).{" "}
          <button type="button" class="link" onClick={() => setRetry((n) => n + 1)}>
            Try again
          </button>
        </span>
      );
  }
  return (
    <div ref={box} class={`media media-${type}`} data-media-state={load.state}>
      {body}
    </div>
  );
}

/** A document: its name and size; a click downloads it (as opaque bytes, so it is saved, never shown here). */
function Document({ m }: { m: Message }) {
  const name = m.media?.filename || "document";
  const size = formatSize(m.media?.size);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const url = useRef<string | null>(null);
  useEffect(
    () => () => {
      if (url.current) URL.revokeObjectURL(url.current);
    },
    [],
  );
  async function download() {
    setBusy(true);
    setProblem(null);
    try {
      url.current ??= URL.createObjectURL(await mediaBlob(m.id, undefined, true));
      const a = document.createElement("a");
      a.href = url.current;
      a.download = name;
      a.click();
    } catch (err) {
      setProblem(err instanceof ApiFailure && (err.code === "media_pending" || err.code === "media_failed") ? err.message : `Could not download it (${errorText(err)}).`);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div class="media media-document" data-media-state={m.media?.status ?? "stored"}>
      <button type="button" class="link" disabled={busy} onClick={() => void download()}>
        📄 {name}
        {size && <span class="muted"> ({size})</span>}
      </button>
      {m.media?.status === "pending" && <span class="media-placeholder">Receiving the document…</span>}
      {problem && <span class="media-placeholder media-problem">{problem}</span>}
    </div>
  );
}

const FILE_TYPES = new Set<string>(["image", "sticker", "video", "audio", "document"]);

/** The file part of a message bubble (nothing for text and other non-file messages). */
export function MessageMedia({ m }: { m: Message }) {
  const media = m.media;
  if (!media || !FILE_TYPES.has(m.type)) return null;
  const type = m.type as FileType;
  // Sent by link: the API would redirect to that URL, which this page must not load (nor link to).
  if (media.url)
    return (
      <div class="media media-link" data-media-state="link">
        <span class="media-placeholder">
          {NOUN[type]} sent by link: <span class="media-url">{media.url}</span>
        </span>
      </div>
    );
  if (media.status === "failed")
    return (
      <div class="media" data-media-state="failed">
        <span class="media-placeholder media-problem">
          The {NOUN[type]} could not be received{media.reason ? `: ${media.reason}` : "."}
        </span>
      </div>
    );
  if (type === "document") return <Document m={m} />;
  return <Inline m={m} type={type} />;
}
