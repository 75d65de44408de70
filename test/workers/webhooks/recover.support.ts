import { api, configureInbox, deliveriesOf, emitEvent, waitFor, type CreatedWebhook, type DeliveryLog } from "./support.ts";
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

/** Emits `n` events one by one (distinct, time-ordered ids) while the inbox answers 500, and waits until each delivery has given up. */
export async function failedDeliveries(key: TestKey, hook: CreatedWebhook, n: number): Promise<string[]> {
  await configureInbox(hook.inbox, { secrets: [hook.secret], then: 500 });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    // a millisecond apart at least, so the ids' order is the emission order
    await new Promise((r) => setTimeout(r, 3));
    ids.push((await emitEvent({ accountId: key.accountId, data: { n: i } }))[0]!.id);
  }
  await waitFor(async () => {
    const log = await deliveriesOf(key, hook.id);
    return ids.every((id) => log.find((d) => d.eventId === id)?.status === "failed");
  }, 30_000, `${n} failed deliveries`);
  return ids;
}

export async function logByEvent(key: TestKey, webhookId: string): Promise<Map<string, DeliveryLog>> {
  return new Map((await deliveriesOf(key, webhookId)).map((d) => [d.eventId, d]));
}
