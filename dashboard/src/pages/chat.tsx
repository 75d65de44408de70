import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, must, type Schemas } from "../api.ts";
import { ErrorBox, navigate, useAction, useEvents, useLoad, when } from "../ui.tsx";
import { listSessions } from "./sessions.tsx";
import { MessageMedia } from "../media.tsx";
// The server's own limits: a file it would refuse is refused here before it is read into memory.
import { MEDIA_LIMITS } from "../../../src/messaging/media/limits.ts";

type Message = Schemas["Message"];

/** `+1 415 555 0123`, `14155550123` or `14155550123@c.us` -> `14155550123@c.us`. */
export function toChatId(input: string): string {
  const t = input.trim();
  if (t.includes("@")) return t;
  return `${t.replace(/[^0-9]/g, "")}@c.us`;
}

const TICKS: Record<string, { mark: string; label: string }> = {
  pending: { mark: "🕓", label: "pending" },
  sent: { mark: "✓", label: "sent" },
  delivered: { mark: "✓✓", label: "delivered" },
  read: { mark: "✓✓", label: "read" },
  failed: { mark: "!", label: "failed" },
};

function Ticks({ status }: { status: string }) {
  const t = TICKS[status];
  if (!t) return null;
  return (
    <span class={`ticks ticks-${status}`} data-status={status} title={t.label} aria-label={t.label}>
      {t.mark}
    </span>
  );
}

function Bubble({ m }: { m: Message }) {
  const body = m.text ?? m.media?.caption ?? (m.template ? `[template ${m.template.name}]` : "");
  return (
    <li class={`bubble ${m.direction === "inbound" ? "in" : "out"}`} data-message={m.id}>
      {m.media ? (
        <MessageMedia m={m} />
      ) : (
        m.type !== "text" && m.type !== "template" && <span class="media-tag">[{m.type}]</span>
      )}
      {body && <span class="text">{body}</span>}
      <span class="meta">
        {when(m.createdAt)} {m.direction !== "inbound" && <Ticks status={m.status} />}
        {m.error && <span class="error"> {m.error.message}</span>}
      </span>
    </li>
  );
}

function mediaType(mime: string): "image" | "video" | "audio" | "document" {
  if (mime.startsWith("image/")) return "image";
  if (mime.startsWith("video/")) return "video";
  if (mime.startsWith("audio/")) return "audio";
  return "document";
}

function base64Of(file: File): Promise<string> {
  return new Promise((res, rej) => {
    const r = new FileReader();
    r.onload = () => res(String(r.result).slice(String(r.result).indexOf(",") + 1));
    r.onerror = () => rej(r.error);
    r.readAsDataURL(file);
  });
}

/** The session's chats from the API, newest activity first; reloaded (at most every 300 ms) on its message events. */
function ChatList({ sessionId, chatId, extra, onOpen, tick }: { sessionId: string; chatId: string; extra: string[]; onOpen: (id: string) => void; tick: number }) {
  const chats = useLoad(() => must(api().GET("/api/chats", { params: { query: { sessionId, limit: 50 } } })), [sessionId, tick]);
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEvents(
    (e) => {
      if (!e.type.startsWith("message.") || (e.data as { sessionId?: unknown }).sessionId !== sessionId || pending.current) return;
      pending.current = setTimeout(() => {
        pending.current = undefined;
        chats.reload();
      }, 300);
    },
    [sessionId],
  );
  useEffect(() => () => clearTimeout(pending.current), []);
  const listed = chats.data?.data ?? [];
  const others = extra.filter((id) => !listed.some((c) => c.id === id));
  // The generated type of a nullable `allOf` member is unusable (`& Record<string, never>`): read it as a Message.
  const preview = (last: unknown) => {
    const m = last as Message | null;
    return m ? (m.text ?? m.media?.caption ?? `[${m.type}]`) : "";
  };
  return (
    <>
      <ErrorBox error={chats.error} />
      <ul class="chat-list">
        {listed.map((c) => (
          <li key={c.id}>
            <button type="button" class={c.id === chatId ? "chat-item current" : "chat-item"} aria-current={c.id === chatId ? "true" : undefined} onClick={() => onOpen(c.id)} data-chat={c.id}>
              <span class="chat-title">{c.contact?.name ?? c.id}</span>
              {c.unreadCount > 0 && (
                <span class="unread" aria-label={`${c.unreadCount} unread`}>
                  {c.unreadCount}
                </span>
              )}
              <span class="chat-preview">{preview(c.lastMessage)}</span>
            </button>
          </li>
        ))}
        {others.map((id) => (
          <li key={id}>
            <button type="button" class={id === chatId ? "chat-item current" : "chat-item"} aria-current={id === chatId ? "true" : undefined} onClick={() => onOpen(id)} data-chat={id}>
              <span class="chat-title">{id}</span>
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}

export function Chat() {
  const params = new URLSearchParams(location.search);
  const sessionId = params.get("session") ?? "";
  const chatId = params.get("chat") ?? "";
  const sessions = useLoad(listSessions);
  const session = sessions.data?.data.find((s) => s.id === sessionId);
  // Chats of this session seen in this tab (history of each is loaded from the API when opened).
  const [seen, setSeen] = useState<string[]>([]);
  const [messages, setMessages] = useState<Message[]>([]);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [openWith, setOpenWith] = useState("");
  const [text, setText] = useState("");
  const [inFrom, setInFrom] = useState("");
  const [inText, setInText] = useState("");
  const fileRef = useRef<HTMLInputElement>(null);
  const act = useAction();
  const listRef = useRef<HTMLOListElement>(null);
  const [listTick, setListTick] = useState(0);

  const go = (s: string, c: string) => navigate(`/chat?${new URLSearchParams({ ...(s ? { session: s } : {}), ...(c ? { chat: c } : {}) })}`);

  useEffect(() => {
    setMessages([]);
    setLoadError(null);
    if (!sessionId || !chatId) return;
    setSeen((cur) => (cur.includes(chatId) ? cur : [chatId, ...cur]));
    let alive = true;
    must(api().GET("/api/messages/{chatId}", { params: { path: { chatId }, query: { sessionId, limit: 100 } } })).then(
      (page) => alive && setMessages((cur) => merge(page.data.slice().reverse(), cur)),
      (e) => alive && setLoadError(e),
    );
    return () => {
      alive = false;
    };
  }, [sessionId, chatId]);

  useEffect(() => {
    listRef.current?.lastElementChild?.scrollIntoView({ block: "nearest" });
  }, [messages.length]);

  // An open chat is a read chat: its inbound messages are marked read (a read receipt on WhatsApp).
  const lastInbound = [...messages].reverse().find((m) => m.direction === "inbound" && m.status !== "read")?.id;
  useEffect(() => {
    if (!sessionId || !chatId || !lastInbound) return;
    void api()
      .POST("/api/chats/{chatId}/read", { params: { path: { chatId } }, body: { sessionId } })
      .then(() => setListTick((t) => t + 1));
  }, [sessionId, chatId, lastInbound]);

  useEvents(
    (e) => {
      if (!e.type.startsWith("message.")) return;
      const m = e.data as unknown as Message;
      if (m.sessionId !== sessionId || typeof m.chatId !== "string") return;
      setSeen((cur) => (cur.includes(m.chatId) ? cur : [...cur, m.chatId]));
      if (m.chatId === chatId) setMessages((cur) => merge(cur, [m]));
    },
    [sessionId, chatId],
  );

  async function send(e: Event) {
    e.preventDefault();
    const m = await act.run(() => must(api().POST("/api/messages/send", { body: { sessionId, to: chatId, text } })));
    if (m) {
      setText("");
      setMessages((cur) => merge(cur, [m]));
    }
  }

  async function sendFile() {
    const file = fileRef.current?.files?.[0];
    if (!file) return;
    const mimetype = file.type || "application/octet-stream";
    const type = mediaType(mimetype);
    const limit = MEDIA_LIMITS[type];
    if (!limit.mimetypes.includes(mimetype) || file.size > limit.maxBytes) {
      act.setError(new Error(`${file.name}: ${type} files must be ${limit.mimetypes.join(", ")} and at most ${limit.maxBytes / 1024 / 1024} MiB.`));
      return;
    }
    const m = await act.run(async () =>
      must(
        api().POST("/api/messages/send-media", {
          body: { sessionId, to: chatId, type, media: { data: await base64Of(file), mimetype, filename: file.name } },
        }),
      ),
    );
    if (m) {
      if (fileRef.current) fileRef.current.value = "";
      setMessages((cur) => merge(cur, [m]));
    }
  }

  async function simulate(e: Event) {
    e.preventDefault();
    const m = await act.run(() => must(api().POST("/api/sessions/{id}/sandbox/inbound", { params: { path: { id: sessionId } }, body: { from: toChatId(inFrom), text: inText } })));
    if (m) {
      setInText("");
      if (m.chatId === chatId) setMessages((cur) => merge(cur, [m]));
      setSeen((cur) => (cur.includes(m.chatId) ? cur : [...cur, m.chatId]));
    }
  }

  const chats = useMemo(() => (chatId && !seen.includes(chatId) ? [chatId, ...seen] : seen), [seen, chatId]);

  return (
    <section>
      <h1>Chat</h1>
      <div class="row wrap">
        <label for="chat-session">Session</label>
        <select id="chat-session" value={sessionId} onChange={(e) => go(e.currentTarget.value, "")}>
          <option value="">Choose a session…</option>
          {sessions.data?.data.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name} ({s.network}, {s.status})
            </option>
          ))}
        </select>
      </div>
      <ErrorBox error={sessions.error} />
      {session && (
        <div class="chat-layout">
          <aside aria-label="Chats">
            <form
              class="stack"
              onSubmit={(e) => {
                e.preventDefault();
                if (openWith.trim()) go(sessionId, toChatId(openWith));
                setOpenWith("");
              }}
            >
              <label for="chat-open">Open a chat with</label>
              <input id="chat-open" inputMode="tel" placeholder="+14155550123" value={openWith} onInput={(e) => setOpenWith(e.currentTarget.value)} />
              <button type="submit" class="secondary">
                Open
              </button>
            </form>
            <ChatList sessionId={sessionId} chatId={chatId} extra={chats} tick={listTick} onOpen={(c) => go(sessionId, c)} />
            {session.network === "sandbox" && (
              <form class="stack card" onSubmit={simulate} aria-labelledby="sim-title">
                <h2 id="sim-title">Simulate an incoming message</h2>
                <label for="sim-from">From</label>
                <input id="sim-from" required inputMode="tel" placeholder="+15550001111" value={inFrom} onInput={(e) => setInFrom(e.currentTarget.value)} />
                <label for="sim-text">Text</label>
                <textarea id="sim-text" required maxLength={4096} value={inText} onInput={(e) => setInText(e.currentTarget.value)} />
                <button type="submit" disabled={act.busy}>
                  Receive
                </button>
              </form>
            )}
          </aside>
          <div class="conversation">
            {chatId ? (
              <>
                <h2>{chatId}</h2>
                <ErrorBox error={loadError} />
                <ol class="messages" ref={listRef} aria-live="polite" aria-label={`Messages with ${chatId}`}>
                  {messages.map((m) => (
                    <Bubble key={m.id} m={m} />
                  ))}
                </ol>
                <form class="composer" onSubmit={send}>
                  <label for="msg-text" class="sr-only">
                    Message
                  </label>
                  <textarea
                    id="msg-text"
                    required
                    maxLength={4096}
                    placeholder="Type a message"
                    value={text}
                    onInput={(e) => setText(e.currentTarget.value)}
                    onKeyDown={(e) => {
                      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void send(e);
                    }}
                  />
                  <button type="submit" disabled={act.busy || !text.trim()}>
                    Send
                  </button>
                </form>
                <div class="row wrap">
                  <label for="msg-file">Attach a file</label>
                  <input id="msg-file" type="file" ref={fileRef} />
                  <button type="button" class="secondary" disabled={act.busy} onClick={() => void sendFile()}>
                    Send file
                  </button>
                </div>
              </>
            ) : (
              <p>Open a chat on the left.</p>
            )}
            <ErrorBox error={act.error} />
          </div>
        </div>
      )}
    </section>
  );
}

/** Adds or replaces messages by id (a status event carries the whole message), oldest first. */
function merge(cur: Message[], more: Message[]): Message[] {
  const byId = new Map(cur.map((m) => [m.id, m]));
  const RANK: Record<string, number> = { pending: 0, sent: 1, delivered: 2, read: 3, failed: 4, received: 0 };
  for (const m of more) {
    const old = byId.get(m.id);
    // Events can arrive out of order: never move a tick backwards.
    if (old && (RANK[old.status] ?? 0) > (RANK[m.status] ?? 0)) continue;
    byId.set(m.id, m);
  }
  return [...byId.values()].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
}
