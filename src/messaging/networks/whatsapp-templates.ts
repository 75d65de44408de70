import type { NewTemplate, TemplateFromNetwork, TemplateResult } from "./driver.ts";
import { mapGraphError } from "./whatsapp-errors.ts";

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; json: unknown }>;

/** Templates per page of the list (Meta's Graph API cursor paging). */
const PAGE = 100;
const FIELDS = "id,name,language,status,category,components,quality_score,rejected_reason";
/** A template's components kept at most this large (JSON); a larger one is not kept (Meta's are far smaller). */
const MAX_COMPONENTS_JSON = 32 * 1024;

const NO_WABA = { code: "business_account_unknown", message: "The session's credentials have no businessAccountId (the WhatsApp Business Account id): templates need it. Create the session again with it." };

function failure<T>(res: { status: number; json: unknown }): TemplateResult<T> {
  if (res.status === 0) return { ok: false, error: { code: "network_unavailable", message: "The WhatsApp Cloud API could not be reached." }, transient: true };
  const err = (res.json as { error?: { code?: number; message?: string } } | null)?.error;
  const mapped = mapGraphError(res.status, err?.code, err?.message);
  return { ok: false, error: mapped.error, transient: mapped.retryAfterMs !== undefined, status: res.status };
}

const str = (v: unknown, max: number): string | null => (typeof v === "string" && v.length > 0 && v.length <= max ? v : null);

/** One template of Meta's list, or null when it lacks what a template has. */
export function templateOfGraph(raw: unknown): TemplateFromNetwork | null {
  const t = raw as Record<string, unknown> | null;
  const name = str(t?.name, 512);
  const language = str(t?.language, 15);
  const status = str(t?.status, 32);
  if (!t || !name || !language || !status) return null;
  const components = Array.isArray(t.components) ? (t.components.filter((c) => c && typeof c === "object") as Record<string, unknown>[]) : [];
  const quality = (t.quality_score as { score?: unknown } | undefined)?.score;
  const reason = str(t.rejected_reason, 256);
  return {
    name,
    language,
    externalId: str(t.id, 64),
    status,
    category: str(t.category, 32) ?? "UNKNOWN",
    components: JSON.stringify(components).length <= MAX_COMPONENTS_JSON ? components : [],
    quality: str(quality, 16),
    rejectedReason: reason && reason !== "NONE" ? reason : null,
  };
}

/** The Cloud API's template calls on the business account `wabaId` (`/{waba-id}/message_templates`). */
export function templateCalls(wabaId: string | null, call: Call) {
  const base = `${wabaId}/message_templates`;
  return {
    async list(after: string | null): Promise<TemplateResult<{ templates: TemplateFromNetwork[]; after: string | null }>> {
      if (!wabaId) return { ok: false, error: NO_WABA };
      const query = new URLSearchParams({ fields: FIELDS, limit: String(PAGE), ...(after ? { after } : {}) });
      const res = await call("GET", `${base}?${query}`);
      if (res.status !== 200) return failure(res);
      const body = res.json as { data?: unknown; paging?: { cursors?: { after?: unknown }; next?: unknown } } | null;
      const data = Array.isArray(body?.data) ? body.data.slice(0, PAGE * 2) : [];
      const templates = data.map(templateOfGraph).filter((t): t is TemplateFromNetwork => t !== null);
      // Meta gives `next` only when there is a next page; the cursor alone is there on the last page too.
      const cursor = typeof body?.paging?.next === "string" ? str(body.paging.cursors?.after, 512) : null;
      return { ok: true, value: { templates, after: data.length > 0 ? cursor : null } };
    },
    async create(t: NewTemplate): Promise<TemplateResult<{ externalId: string | null; status: string; category: string }>> {
      if (!wabaId) return { ok: false, error: NO_WABA };
      const res = await call("POST", base, { name: t.name, language: t.language, category: t.category, components: t.components, ...(t.allowCategoryChange !== undefined ? { allow_category_change: t.allowCategoryChange } : {}) });
      if (res.status !== 200) return failure(res);
      const body = res.json as { id?: unknown; status?: unknown; category?: unknown } | null;
      return { ok: true, value: { externalId: str(body?.id, 64), status: str(body?.status, 32) ?? "PENDING", category: str(body?.category, 32) ?? t.category } };
    },
    async remove(name: string, externalId: string | null): Promise<TemplateResult<null>> {
      if (!wabaId) return { ok: false, error: NO_WABA };
      const query = new URLSearchParams({ name, ...(externalId ? { hsm_id: externalId } : {}) });
      const res = await call("DELETE", `${base}?${query}`);
      return res.status === 200 ? { ok: true, value: null } : failure(res);
    },
  };
}
