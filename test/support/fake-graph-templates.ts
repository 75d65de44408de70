import { randomBytes } from "node:crypto";

/**
 * The fake Graph API's WhatsApp Business Accounts and their message templates
 * (`/{waba-id}/message_templates`: list paged by cursor, create as PENDING, delete by name or hsm_id).
 * Control routes (fake-graph.ts):
 *   POST /__fake/wabas {wabaId, token, templates?}         register an account with its templates
 *   POST /__fake/wabas/:id/templates/:name {language, ...}  change a template (e.g. {status: "APPROVED"})
 *   GET  /__fake/wabas/:id                                  {templates, requests} so far
 */
export interface FakeTemplate {
  id: string;
  name: string;
  language: string;
  status: string;
  category: string;
  components: Record<string, unknown>[];
  quality_score?: { score: string };
  rejected_reason?: string;
}

export interface Waba {
  token: string;
  templates: FakeTemplate[];
  requests: { method: string; path: string; body: unknown }[];
}

type Answer = (status: number, body: unknown) => void;
type GraphErr = (code: number, message?: string) => { status: number; body: unknown };

/** The operation of the reference document a template request is (the fake validates it against that one). */
export function templateOperation(method: string): string | undefined {
  return method === "GET" ? "getTemplateByNameDefaultFields" : method === "POST" ? "createAuthenticationTemplateWOtpCopyCodeButton" : method === "DELETE" ? "deleteTemplateByName" : undefined;
}

const newTemplateId = () => String(BigInt(`0x${randomBytes(6).toString("hex")}`));

/** Answers one template request of an authorised caller. */
export function serveTemplates(waba: Waba, method: string, query: URLSearchParams, body: Record<string, unknown> | undefined, answer: Answer, graphError: GraphErr): void {
  if (method === "GET") {
    const limit = Math.min(Number(query.get("limit") ?? 25), 1000);
    const start = query.get("after") ? Number(Buffer.from(query.get("after")!, "base64url").toString()) : 0;
    const name = query.get("name");
    const list = name ? waba.templates.filter((t) => t.name === name) : waba.templates;
    const page = list.slice(start, start + limit);
    const end = start + page.length;
    const cursor = (n: number) => Buffer.from(String(n)).toString("base64url");
    return answer(200, { data: page, paging: { cursors: { before: cursor(start), after: cursor(end) }, ...(end < list.length ? { next: `https://graph.facebook.com/v23.0/next?after=${cursor(end)}` } : {}) } });
  }
  if (method === "POST") {
    const t = body as { name: string; language: string; category: string; components: Record<string, unknown>[] };
    if (waba.templates.some((x) => x.name === t.name && x.language === t.language)) {
      const e = graphError(100, "(#100) Invalid parameter: Content in this language already exists");
      return answer(e.status, e.body);
    }
    const created: FakeTemplate = { id: newTemplateId(), name: t.name, language: t.language, status: "PENDING", category: t.category, components: t.components, quality_score: { score: "UNKNOWN" } };
    waba.templates.push(created);
    return answer(200, { id: created.id, status: "PENDING", category: created.category });
  }
  const name = query.get("name");
  const hsm = query.get("hsm_id");
  const gone = waba.templates.filter((t) => t.name === name && (!hsm || t.id === hsm));
  if (gone.length === 0) {
    const e = graphError(100, "(#100) Invalid parameter: template not found");
    return answer(e.status, e.body);
  }
  waba.templates = waba.templates.filter((t) => !gone.includes(t));
  return answer(200, { success: true });
}
