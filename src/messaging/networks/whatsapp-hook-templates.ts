import type { TemplateUpdate } from "./driver.ts";

/** The business account's template webhooks, routed to the session's cached templates. */
export const TEMPLATE_FIELDS = new Set(["message_template_status_update", "message_template_quality_update", "template_category_update"]);

const str = (v: unknown, max: number): string | undefined => (typeof v === "string" && v.length > 0 && v.length <= max ? v : undefined);

/** One template change of a webhook (`field` one of TEMPLATE_FIELDS), or null when it names no template. */
export function templateUpdateOf(field: string, value: Record<string, unknown>): TemplateUpdate | null {
  const name = str(value.message_template_name, 512);
  const language = str(value.message_template_language, 15);
  if (!name || !language) return null;
  const id = value.message_template_id;
  const base: TemplateUpdate = { name, language, externalId: typeof id === "number" || typeof id === "string" ? String(id).slice(0, 64) : null };
  if (field === "message_template_status_update") {
    const status = str(value.event, 32);
    if (!status) return null;
    const reason = str(value.reason, 256);
    const category = str(value.message_template_category, 32);
    // Meta sends reason "NONE" with approvals; a reason only means something with a rejection.
    return { ...base, status, rejectedReason: status === "REJECTED" && reason && reason !== "NONE" ? reason : null, ...(category ? { category } : {}) };
  }
  if (field === "message_template_quality_update") {
    const quality = str(value.new_quality_score, 16);
    return quality ? { ...base, quality } : null;
  }
  const category = str(value.new_category, 32) ?? str(value.correct_category, 32);
  return category ? { ...base, category } : null;
}
