import { events } from "../../../src/db/schema/index.ts";
import { fanOut } from "../../../src/events/fanout.ts";
import { newId } from "../../../src/platform/ids.ts";
import { accountShard } from "../../../src/platform/shards.ts";
import { syntheticEventIds } from "../event-tap.ts";
import { api, configureInbox, deliveriesOf, driveAttempts, env, type CreatedWebhook, type DeliveryLog } from "./support.ts";
import type { TestKey } from "../helpers.ts";

export interface RecoverAnswer {
  queued: number;
  hasMore: boolean;
  since: string;
}

export async function recover(key: TestKey, webhookId: string, body: unknown): Promise<Response> {
  return api(`/api/webhooks/${webhookId}/recover`, { method: "POST", key: key.key, json: body });
}

export async function recoverOk(key: TestKey, webhookId: string, body: unknown): Promise<RecoverAnswer> {
  const res = await recover(key, webhookId, body);
  if (res.status !== 202) throw new Error(`recover: ${res.status} ${await res.text()}`);
  return (await res.json()) as RecoverAnswer;
}

/**
 * Records `n` events one by one (distinct, time-ordered ids) and fans them out while the inbox answers
 * 500, then makes every attempt of their deliveries on virtual time (support.ts' driveAttempts) until
 * each has given up: the schedule's waits cost nothing.
 */
export async function failedDeliveries(key: TestKey, hook: CreatedWebhook, n: number): Promise<string[]> {
  await configureInbox(hook.inbox, { secrets: [hook.secret], then: 500 });
  const shard = await accountShard(env, key.accountId);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    // a millisecond apart at least, so the ids' order is the recording order
    await new Promise((r) => setTimeout(r, 3));
    const id = newId("evt");
    syntheticEventIds.add(id); // made-up data: not checked against the catalog
    const now = Date.now();
    const payload = JSON.stringify({ type: "message.received", timestamp: new Date(now).toISOString(), data: { id: `msg_${i}`, text: "hi", n: i } });
    await shard.db.insert(events).values({ id, accountId: key.accountId, type: "message.received", sessionId: null, payload, createdAt: now });
    for (const deliveryId of await fanOut(shard, [id])) await driveAttempts(shard, deliveryId);
    ids.push(id);
  }
  const log = await deliveriesOf(key, hook.id);
  if (!ids.every((id) => log.find((d) => d.eventId === id)?.status === "failed")) throw new Error(`${n} deliveries did not all fail`);
  return ids;
}

export async function logByEvent(key: TestKey, webhookId: string): Promise<Map<string, DeliveryLog>> {
  return new Map((await deliveriesOf(key, webhookId)).map((d) => [d.eventId, d]));
}
