import { render } from "preact";
import { lazy, Suspense } from "preact/compat";
import { useEffect, useState } from "preact/hooks";
import { api, must, signIn, signOut, storedKey, errorText } from "./api.ts";
import { onStreamState, startStream, stopStream, isConnected } from "./events.ts";
import { Link } from "./ui.tsx";
import { Overview } from "./pages/overview.tsx";
import { Sessions } from "./pages/sessions.tsx";
import { Chat } from "./pages/chat.tsx";
import { Contacts } from "./pages/contacts.tsx";
import { Campaigns } from "./pages/campaigns.tsx";
import { Webhooks } from "./pages/webhooks.tsx";
import "./style.css";

// The editor (CodeMirror) and PDF.js are only fetched when the playground opens.
const Latex = lazy(() => import("./pages/latex.tsx").then((m) => ({ default: m.Latex })));

const PAGES = [
  { path: "/", label: "Overview", view: Overview },
  { path: "/sessions", label: "Sessions", view: Sessions },
  { path: "/chat", label: "Chat", view: Chat },
  { path: "/contacts", label: "Contacts", view: Contacts },
  { path: "/campaigns", label: "Campaigns", view: Campaigns },
  { path: "/webhooks", label: "Webhooks", view: Webhooks },
  { path: "/latex", label: "LaTeX", view: Latex },
] as const;

function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const on = () => setPath(location.pathname);
    window.addEventListener("popstate", on);
    return () => window.removeEventListener("popstate", on);
  }, []);
  return path;
}

function SignIn({ onDone }: { onDone: () => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    signIn(key.trim());
    try {
      await must(api().GET("/api/account"));
      onDone();
    } catch (err) {
      signOut();
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <main class="signin">
      <h1>TeXmsg console</h1>
      <form onSubmit={submit}>
        <label for="apikey">API key</label>
        <input
          id="apikey"
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="tmk_…"
          value={key}
          required
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <p class="hint">Kept in this tab only (sessionStorage) and sent as an Authorization header; never in a URL or cookie.</p>
        <button type="submit" disabled={busy || !key.trim()}>
          Sign in
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(storedKey() !== null);
  const [live, setLive] = useState(isConnected());
  const [menuOpen, setMenuOpen] = useState(false);
  const path = usePath();

  useEffect(() => onStreamState(setLive), []);
  useEffect(() => {
    if (!signedIn) return;
    startStream();
    const out = () => {
      stopStream();
      signOut();
      setSignedIn(false);
    };
    window.addEventListener("texmsg:unauthorized", out);
    return () => window.removeEventListener("texmsg:unauthorized", out);
  }, [signedIn]);
  useEffect(() => setMenuOpen(false), [path]);

  const page = PAGES.find((p) => p.path === path) ?? null;
  useEffect(() => {
    document.title = `${signedIn ? (page?.label ?? "Not found") : "Sign in"} · TeXmsg console`;
  }, [page, signedIn]);
  if (!signedIn) return <SignIn onDone={() => setSignedIn(true)} />;
  const View = page?.view;

  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <strong class="brand">TeXmsg</strong>
        <button type="button" class="menu-toggle secondary" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <span class={live ? "live on" : "live"} role="status" aria-live="polite">
          {live ? "Live" : "Offline"}
        </span>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            stopStream();
            signOut();
            setSignedIn(false);
          }}
        >
          Sign out
        </button>
      </header>
      <nav id="nav" class={menuOpen ? "open" : ""} aria-label="Pages">
        <ul>
          {PAGES.map((p) => (
            <li key={p.path}>
              <Link href={p.path} current={p.path === path}>
                {p.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {View ? (
          <Suspense fallback={<p role="status">Loading…</p>}>
            <View />
          </Suspense>
        ) : (
          <section>
            <h1>Not found</h1>
            <p>
              No page here. <Link href="/">Go to the overview</Link>.
            </p>
          </section>
        )}
      </main>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
