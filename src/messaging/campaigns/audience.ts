import { newId } from "../../platform/ids.ts";
import type { CampaignRow } from "./mapper.ts";
import type { Audience } from "./schemas.ts";
import type { Shard } from "../../platform/shards.ts";

/**
 * Resolves the audience into recipient rows in one SQL statement (no row limit, no bound-parameter
 * limit: ids, BSUIDs and tags travel as one JSON parameter each). Order: the listed contact ids in
 * their order, then the listed BSUIDs' contacts in theirs, then tag / all matches by contact id. The first entry of a phone number is the recipient;
 * later ones are `skipped: duplicate`; opted-out contacts are `skipped: opted_out`.
 */
const RESOLVE_SQL = `
INSERT INTO campaign_recipients (campaign_id, seq, account_id, contact_id, phone, name, email, attributes, status, reason, message_id)
SELECT ?1, row_number() OVER (ORDER BY grp, ord), ?2, id, phone, name, email, attributes,
       CASE WHEN dup > 1 OR opted_out THEN 'skipped' ELSE 'pending' END,
       CASE WHEN dup > 1 THEN 'duplicate' WHEN opted_out THEN 'opted_out' END,
       NULL
FROM (
  SELECT p.*, row_number() OVER (PARTITION BY p.phone ORDER BY p.grp, p.ord) AS dup FROM (
    SELECT c.id, c.phone, c.name, c.email, c.attributes, c.opted_out, 0 AS grp, printf('%010d', j.key) AS ord
      FROM json_each(?3) j JOIN contacts c ON c.account_id = ?2 AND c.id = j.value
    UNION ALL
    SELECT c.id, c.phone, c.name, c.email, c.attributes, c.opted_out, 1 AS grp, printf('%010d', j.key) AS ord
      FROM json_each(?7) j JOIN contacts c ON c.account_id = ?2 AND json_extract(c.identity, '$.userId') = j.value
     WHERE c.id NOT IN (SELECT value FROM json_each(?3))
    UNION ALL
    SELECT c.id, c.phone, c.name, c.email, c.attributes, c.opted_out, 2 AS grp, c.id AS ord
      FROM contacts c
     WHERE c.account_id = ?2
       AND (?4 = 1 OR EXISTS (SELECT 1 FROM json_each(c.tags) t WHERE t.value IN (SELECT value FROM json_each(?5))))
       AND c.id NOT IN (SELECT value FROM json_each(?3))
       AND coalesce(json_extract(c.identity, '$.userId'), '') NOT IN (SELECT value FROM json_each(?7))
  ) p
)
WHERE EXISTS (SELECT 1 FROM campaigns WHERE id = ?1 AND start_token = ?6)`;

export interface Launched {
  total: number;
  skipped: number;
}

/**
 * draft|scheduled -> running with the audience resolved, all in one D1 batch (a transaction): the
 * state change, the recipient rows and the totals commit together, and only the start that won the
 * conditional UPDATE inserts rows (its token guards the INSERT). Null when another start won.
 */
export async function launch(shard: Shard, c: CampaignRow, now = Date.now()): Promise<Launched | null> {
  const d1 = shard.d1;
  const token = newId("run", now);
  const audience = JSON.parse(c.audience) as Audience;
  const [claim, , totals] = await d1.batch([
    d1.prepare(
      "UPDATE campaigns SET status = 'running', status_reason = NULL, start_token = ?1, started_at = ?2, kicked_at = ?2, updated_at = ?2 WHERE id = ?3 AND account_id = ?4 AND status IN ('draft', 'scheduled')",
    ).bind(token, now, c.id, c.accountId),
    d1.prepare(RESOLVE_SQL).bind(c.id, c.accountId, JSON.stringify(audience.contactIds ?? []), audience.all ? 1 : 0, JSON.stringify(audience.tags ?? []), token, JSON.stringify(audience.userIds ?? [])),
    d1.prepare(
      `UPDATE campaigns SET total = (SELECT count(*) FROM campaign_recipients WHERE campaign_id = ?1),
                            skipped = (SELECT count(*) FROM campaign_recipients WHERE campaign_id = ?1 AND status = 'skipped')
        WHERE id = ?1 AND start_token = ?2 RETURNING total, skipped`,
    ).bind(c.id, token),
  ]);
  if (!claim!.meta.changes) return null;
  const row = (totals!.results as Launched[])[0]!;
  return { total: row.total, skipped: row.skipped };
}
