// The campaign claim's INSERT over the shards' real schema (their migrations on node:sqlite, no
// statistics, as a new D1 database has none): each listed recipient is one primary-key lookup, and
// the rows read by a claim do not grow with the campaign's pending recipients.
import { DatabaseSync } from "node:sqlite";
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { claimInserts, type ClaimRow } from "../../src/messaging/store/campaign-claim-sql.ts";

function shardDb(): DatabaseSync {
  const db = new DatabaseSync(":memory:");
  for (const f of readdirSync("migrations/shard").filter((f) => f.endsWith(".sql")).sort()) {
    for (const s of readFileSync(`migrations/shard/${f}`, "utf8").split("--> statement-breakpoint")) if (s.trim()) db.exec(s);
  }
  return db;
}

/** The claim's statements as node:sqlite would take them. */
function capture(rows: ClaimRow[]): { taken: { sql: string; args: (string | number | null)[] }[] } {
  return { taken: claimInserts(claim, rows) };
}

function addRecipients(db: DatabaseSync, campaignId: string, n: number): void {
  db.exec("BEGIN");
  const ins = db.prepare("INSERT INTO campaign_recipients (campaign_id, seq, account_id, contact_id, phone, name, email, attributes, status) VALUES (?, ?, 'acc_1', ?, ?, NULL, NULL, '{}', 'pending')");
  for (let i = 1; i <= n; i++) ins.run(campaignId, i, `ct_${i}`, `+1651${1_000_000 + i}`);
  db.exec("COMMIT");
}

const claim = { idBase: "msg_base", seqDigits: 7, accountId: "acc_1", sessionId: "ses_1", campaignId: "cmp_1", type: "text" as const, template: null, content: null, createdAt: 1 };

describe("campaign claim INSERT", () => {
  it("inserts one pending message per listed pending recipient, with its text, media and chat", () => {
    const db = shardDb();
    addRecipients(db, "cmp_1", 5);
    db.prepare("UPDATE campaign_recipients SET status = 'skipped' WHERE seq = 3").run();
    const media = { url: "https://example.com/a.png", mimetype: null, filename: null, caption: "hi", size: null, mediaId: null, origin: null };
    const { taken } = capture([1, 2, 3].map((seq) => ({ seq, text: seq === 2 ? null : `Hi ${seq} "quoted" ✓`, media: seq === 2 ? media : null })));
    for (const t of taken) db.prepare(t.sql).run(...t.args);
    const rows = db.prepare("SELECT id, chat_id, text, media, status, campaign_id FROM messages ORDER BY id").all();
    expect(rows).toEqual([
      { id: "msg_base0000001", chat_id: "16511000001@c.us", text: 'Hi 1 "quoted" ✓', media: null, status: "pending", campaign_id: "cmp_1" },
      { id: "msg_base0000002", chat_id: "16511000002@c.us", text: null, media: JSON.stringify(media), status: "pending", campaign_id: "cmp_1" },
    ]);
  });

  it("walks the listed rows by primary key, not the campaign's pending recipients (no statistics)", () => {
    const db = shardDb();
    addRecipients(db, "cmp_1", 20_000);
    const { taken } = capture(Array.from({ length: 1000 }, (_, i) => ({ seq: 5001 + i, text: "x", media: null })));
    expect(taken.length).toBe(1);
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${taken[0]!.sql}`).all().map((r) => String((r as { detail: string }).detail));
    expect(plan[0]).toMatch(/^SCAN j VIRTUAL TABLE/);
    expect(plan[1]).toMatch(/^SEARCH r USING .*seq=\?/);
  });
});
