import { jsonParts } from "../../platform/d1.ts";
import type { Content } from "../messages/content.ts";
import type { MessageRow, StoredMedia } from "../messages/mapper.ts";
import type { TemplateSpec } from "../messages/schemas.ts";

/** What every message of one campaign claim shares; ids are `idBase` plus the recipient's seq in `seqDigits` digits. */
export interface CampaignClaim {
  idBase: string;
  seqDigits: number;
  accountId: string;
  sessionId: string;
  campaignId: string;
  type: MessageRow["type"];
  template: TemplateSpec | null;
  /** The same typed body for every recipient (location, contacts, interactive). */
  content: Content | null;
  createdAt: number;
}

export type ClaimRow = { seq: number; text: string | null; media: StoredMedia | null };

/**
 * The INSERTs of one campaign claim as SQL and bindings (free of Worker bindings, so the plan is unit
 * tested on node:sqlite): a `pending` message per listed recipient, each only while its
 * `campaign_recipients` row is still `pending`, addressed to its phone (or BSUID). The rows travel as
 * one JSON parameter per statement (`jsonParts`). CROSS JOIN keeps the listed rows as the outer loop,
 * each a primary-key lookup: left to itself, SQLite (without statistics) walked every pending
 * recipient of the campaign for each statement, a cost that grew with the square of the campaign's size.
 */
export function claimInserts(c: CampaignClaim, rows: ClaimRow[]): { sql: string; args: (string | number | null)[] }[] {
  const sql = `INSERT INTO messages (id, account_id, session_id, chat_id, direction, type, text, template, media, content, status, campaign_id, created_at)
       SELECT ?1 || printf('%0${c.seqDigits}d', r.seq), ?2, ?3, CASE WHEN r.phone LIKE '+%' THEN substr(r.phone, 2) || '@c.us' ELSE r.phone || '@bsuid' END, 'outbound', ?4, j.value ->> '$[1]', ?5, j.value ->> '$[2]', ?8, 'pending', ?6, ?7
         FROM json_each(?9) j
        CROSS JOIN campaign_recipients r ON r.campaign_id = ?6 AND r.seq = j.value ->> '$[0]' AND r.status = 'pending'`;
  const shared = [c.idBase, c.accountId, c.sessionId, c.type, c.template ? JSON.stringify(c.template) : null, c.campaignId, c.createdAt, c.content ? JSON.stringify(c.content) : null];
  return jsonParts(rows.map((r) => [r.seq, r.text, r.media ? JSON.stringify(r.media) : null])).map((part) => ({ sql, args: [...shared, part] }));
}
