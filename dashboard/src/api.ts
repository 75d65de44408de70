// The console's view of the API: the typed client (client/) on this origin, with the pasted API key
// as a Bearer header. The key lives in sessionStorage only (gone with the tab), never in a URL,
// cookie or log.
import { createClient, type ApiClient, type components } from "../../client/index.ts";

export type Schemas = components["schemas"];
const STORAGE_KEY = "texmsg.apiKey";

export interface RateInfo {
  limit: number;
  remaining: number;
  resetAt: number;
}

type Listener = () => void;
const listeners = new Set<Listener>();
let rate: RateInfo | null = null;
let client: ApiClient | null = null;

export function onRateChange(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
export const currentRate = () => rate;

/** Every response's rate-limit headers, for the overview's "limit / remaining". */
async function recordingFetch(input: Request | URL | string, init?: RequestInit): Promise<Response> {
  const res = await fetch(input, init);
  const limit = res.headers.get("X-RateLimit-Limit");
  const remaining = res.headers.get("X-RateLimit-Remaining");
  if (limit !== null && remaining !== null) {
    rate = { limit: Number(limit), remaining: Number(remaining), resetAt: Number(res.headers.get("X-RateLimit-Reset") ?? 0) };
    for (const l of listeners) l();
  }
  return res;
}

export function storedKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

export function signIn(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
  client = null;
}

export function signOut(): void {
  sessionStorage.removeItem(STORAGE_KEY);
  client = null;
  rate = null;
}

export function api(): ApiClient {
  if (!client) {
    const apiKey = storedKey() ?? undefined;
    client = createClient({ baseUrl: location.origin, ...(apiKey ? { apiKey } : {}), fetch: recordingFetch as typeof fetch });
  }
  return client;
}

/** The API's error body: `{error: {code, message, details?: {issues?: [{path, message}]}}}`. */
export interface ApiErrorBody {
  error: { code: string; message: string; details?: { issues?: Array<{ path: string; message: string }> }; [k: string]: unknown };
}

export class ApiFailure extends Error {
  readonly status: number;
  readonly body: ApiErrorBody | null;
  constructor(status: number, body: ApiErrorBody | null) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
  get code(): string {
    return this.body?.error?.code ?? "http_error";
  }
  /** Validation issues by field path (`message.text`, `audience`, ...). */
  fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const i of this.body?.error?.details?.issues ?? []) if (!(i.path in out)) out[i.path] = i.message;
    return out;
  }
}

/** Unwraps an openapi-fetch result: the data, or an ApiFailure carrying the error body. */
export async function must<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p;
  if (!response.ok) {
    if (response.status === 401) window.dispatchEvent(new Event("texmsg:unauthorized"));
    throw new ApiFailure(response.status, (error ?? null) as ApiErrorBody | null);
  }
  return data as T;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiFailure) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
