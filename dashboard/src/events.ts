// Live updates: one WebSocket to /api/events/stream per tab. A browser cannot put the API key on a
// WebSocket, so each (re)connect first gets a single-use ticket (POST with the Bearer header) and
// presents it as `?ticket=`. After a drop it resumes with `?after=<last event id>`, so events sent while
// it was away are replayed (within the server's retention).
import { api, must } from "./api.ts";

export interface StreamEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

type Handler = (e: StreamEvent) => void;
type StateHandler = (connected: boolean) => void;

const handlers = new Set<Handler>();
const stateHandlers = new Set<StateHandler>();
let socket: WebSocket | null = null;
let lastId: string | null = null;
let wanted = false;
let retryMs = 500;
let timer: ReturnType<typeof setTimeout> | undefined;
let connected = false;

function setConnected(v: boolean) {
  connected = v;
  for (const h of stateHandlers) h(v);
}

export const isConnected = () => connected;

export function onEvent(h: Handler): () => void {
  handlers.add(h);
  return () => handlers.delete(h);
}

export function onStreamState(h: StateHandler): () => void {
  stateHandlers.add(h);
  return () => stateHandlers.delete(h);
}

async function connect(): Promise<void> {
  if (!wanted) return;
  try {
    const { ticket } = await must(api().POST("/api/events/stream/tickets"));
    if (!wanted) return;
    const url = new URL("/api/events/stream", location.href);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("ticket", ticket);
    if (lastId) url.searchParams.set("after", lastId);
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => {
      retryMs = 500;
      setConnected(true);
    };
    ws.onmessage = (m) => {
      if (typeof m.data !== "string") return;
      let e: StreamEvent;
      try {
        e = JSON.parse(m.data) as StreamEvent;
      } catch {
        return;
      }
      if (typeof e.id !== "string" || typeof e.type !== "string") return;
      lastId = e.id;
      for (const h of handlers) h(e);
    };
    ws.onclose = () => {
      if (socket === ws) socket = null;
      setConnected(false);
      schedule();
    };
  } catch {
    schedule();
  }
}

function schedule() {
  if (!wanted) return;
  clearTimeout(timer);
  timer = setTimeout(() => void connect(), retryMs);
  retryMs = Math.min(retryMs * 2, 15_000);
}

export function startStream(): void {
  if (wanted) return;
  wanted = true;
  void connect();
}

export function stopStream(): void {
  wanted = false;
  clearTimeout(timer);
  lastId = null;
  socket?.close(1000);
  socket = null;
  setConnected(false);
}
