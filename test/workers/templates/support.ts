import { api } from "../helpers.ts";
import { eventsOf, json, waitFor } from "../messaging/support.ts";

export interface TemplateJson {
  id: string;
  sessionId: string;
  name: string;
  language: string;
  networkId: string | null;
  status: string;
  category: string;
  components: Record<string, unknown>[];
  quality: string | null;
  rejectedReason: string | null;
}

/** A template with a one-parameter header, a two-parameter body, a footer and a URL button with a parameter. */
export function shippingTemplate(name: string) {
  return {
    name,
    language: "en_US",
    category: "UTILITY",
    components: [
      { type: "HEADER", format: "TEXT", text: "Order {{1}}", example: { header_text: ["A-1"] } },
      { type: "BODY", text: "Hi {{1}}, your order {{2}} has shipped.", example: { body_text: [["Ada", "A-1042"]] } },
      { type: "FOOTER", text: "Reply STOP to opt out" },
      { type: "BUTTONS", buttons: [{ type: "URL", text: "Track", url: "https://example.com/track/{{1}}", example: ["A-1042"] }, { type: "QUICK_REPLY", text: "Thanks" }] },
    ],
  };
}

/** The send-side components that fit shippingTemplate. */
export const SHIPPING_PARAMS = [
  { type: "header", parameters: [{ type: "text", text: "A-7" }] },
  { type: "body", parameters: [{ type: "text", text: "Ada" }, { type: "text", text: "A-7" }] },
  { type: "button", sub_type: "url", index: 0, parameters: [{ type: "text", text: "A-7" }] },
];

export function createTemplate(key: string, sessionId: string, body: unknown): Promise<Response> {
  return api(`/api/sessions/${sessionId}/templates`, { method: "POST", key, json: body });
}

/** Every page of the session's templates (the first with `refresh=1` when asked). */
export async function listTemplates(key: string, sessionId: string, refresh = false): Promise<{ data: TemplateJson[]; syncedAt: string | null; pages: number }> {
  const data: TemplateJson[] = [];
  let cursor: string | null = null;
  let syncedAt: string | null = null;
  let pages = 0;
  do {
    const query = new URLSearchParams({ limit: "100", ...(refresh && pages === 0 ? { refresh: "1" } : {}), ...(cursor ? { cursor } : {}) });
    const res = await api(`/api/sessions/${sessionId}/templates?${query}`, { key });
    if (res.status !== 200) throw new Error(`list ${res.status}: ${await res.text()}`);
    const page = await json<{ data: TemplateJson[]; nextCursor: string | null; syncedAt: string | null }>(res);
    data.push(...page.data);
    ({ nextCursor: cursor, syncedAt } = page);
    pages++;
  } while (cursor && pages < 100);
  return { data, syncedAt, pages };
}

/** A sandbox template created and then approved by the sandbox's review (its template.updated seen). */
export async function approvedSandboxTemplate(key: string, accountId: string, sessionId: string, name: string): Promise<TemplateJson> {
  const res = await createTemplate(key, sessionId, shippingTemplate(name));
  if (res.status !== 201) throw new Error(`create ${res.status}: ${await res.text()}`);
  return waitFor(() => eventsOf(accountId, "template.updated").find((e) => (e.data as unknown as TemplateJson).name === name && e.data.status === "APPROVED")?.data as unknown as TemplateJson, 10_000, `${name} approved`);
}
