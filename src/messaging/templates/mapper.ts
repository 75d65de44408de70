import type { messageTemplates } from "../../db/schema/index.ts";
import { iso } from "../../platform/time.ts";
import type { TemplateComponent } from "./rules.ts";
import type { Template } from "./schemas.ts";

export type TemplateRow = typeof messageTemplates.$inferSelect;

export function toTemplate(row: TemplateRow): Template {
  return {
    id: row.id,
    sessionId: row.sessionId,
    name: row.name,
    language: row.language,
    networkId: row.externalId,
    status: row.status,
    category: row.category,
    components: JSON.parse(row.components) as TemplateComponent[],
    quality: row.quality,
    rejectedReason: row.rejectedReason,
    syncedAt: iso(row.syncedAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}
