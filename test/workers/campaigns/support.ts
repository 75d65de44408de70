import { api } from "../helpers.ts";
import { json, waitFor } from "../messaging/support.ts";
import type { components } from "../../../client/index.ts";

export type Stats = components["schemas"]["CampaignStats"];

export interface CampaignJson {
  id: string;
  status: string;
  statusReason: string | null;
  sessionId: string;
  stats: Stats;
  startedAt: string | null;
  completedAt: string | null;
  scheduledAt: string | null;
  etaSeconds: number | null;
  [k: string]: unknown;
}

export interface RecipientJson {
  seq: number;
  contactId: string;
  phone: string;
  chatId: string;
  name: string | null;
  status: string;
  reason: string | null;
  messageId: string | null;
  error: { code: string; message: string } | null;
}

let phoneCounter = 0;
/** Phones outside the sandbox session range, unique per call (contacts are unique per account). */
export function uniquePhone(): string {
  phoneCounter++;
  return `+1650${String(phoneCounter).padStart(7, "0")}`;
}

export async function importContacts(key: string, contacts: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < contacts.length; i += 1000) {
    const res = await api("/api/contacts/import", { method: "POST", key, json: { contacts: contacts.slice(i, i + 1000) } });
    if (res.status !== 200) throw new Error(`import ${res.status}: ${await res.text()}`);
  }
}

export async function createContact(key: string, body: Record<string, unknown>): Promise<{ id: string; phone: string }> {
  const res = await api("/api/contacts", { method: "POST", key, json: body });
  if (res.status !== 201) throw new Error(`contact ${res.status}: ${await res.text()}`);
  return json(res);
}

export async function createCampaign(key: string, body: Record<string, unknown>): Promise<CampaignJson> {
  const res = await api("/api/campaigns", { method: "POST", key, json: { name: "test", ...body } });
  if (res.status !== 201) throw new Error(`campaign ${res.status}: ${await res.text()}`);
  return json<CampaignJson>(res);
}

export async function action(key: string, id: string, name: "start" | "pause" | "resume" | "cancel"): Promise<Response> {
  return api(`/api/campaigns/${id}/${name}`, { method: "POST", key });
}

export async function getCampaign(key: string, id: string): Promise<CampaignJson> {
  const res = await api(`/api/campaigns/${id}`, { key });
  if (res.status !== 200) throw new Error(`get campaign ${res.status}: ${await res.text()}`);
  return json<CampaignJson>(res);
}

export async function recipients(key: string, id: string, query = ""): Promise<RecipientJson[]> {
  const out: RecipientJson[] = [];
  let cursor: string | null = null;
  do {
    const res = await api(`/api/campaigns/${id}/recipients?limit=100${query}${cursor ? `&cursor=${cursor}` : ""}`, { key });
    const page = await json<{ data: RecipientJson[]; nextCursor: string | null }>(res);
    out.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

export function sumOf(s: Stats): number {
  return s.pending + s.sent + s.delivered + s.read + s.failed + s.skipped;
}

/** Polls the campaign until `done`, checking on every read that the states add up to total. */
export async function watch(key: string, id: string, done: (c: CampaignJson) => boolean, timeoutMs = 20_000): Promise<{ last: CampaignJson; seen: CampaignJson[] }> {
  const seen: CampaignJson[] = [];
  const last = await waitFor(async () => {
    const c = await getCampaign(key, id);
    seen.push(c);
    if (sumOf(c.stats) !== c.stats.total) throw new Error(`stats do not add up: ${JSON.stringify(c.stats)}`);
    return done(c) ? c : undefined;
  }, timeoutMs, `campaign ${id}`);
  return { last, seen };
}
