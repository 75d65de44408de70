import { EVENT_TYPES } from "../../../src/events/types.ts";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { Received } from "../../support/receiver.ts";
import type { TestKey } from "../helpers.ts";
import { createKey, receivedAt, registerWebhook, waitFor, type CreatedWebhook } from "./support.ts";

/** A verified delivery, its body parsed. */
export interface Delivered {
  webhookId: string;
  verified: boolean;
  type: string;
  timestamp: string;
  data: Record<string, unknown> & { id: string };
  receivedAt: number;
}

export const settle = (ms = 1_500) => new Promise((r) => setTimeout(r, ms));

export async function delivered(hook: CreatedWebhook): Promise<Delivered[]> {
  return (await receivedAt(hook.inbox)).map((r: Received) => {
    const body = JSON.parse(r.body) as { type: string; timestamp: string; data: Delivered["data"] };
    return { webhookId: r.webhookId, verified: r.verified, type: body.type, timestamp: body.timestamp, data: body.data, receivedAt: r.receivedAt };
  });
}

/** Deliveries of `type` about the resource `id` at one webhook. */
export async function about(hook: CreatedWebhook, type: string, id: string): Promise<Delivered[]> {
  return (await delivered(hook)).filter((d) => d.type === type && d.data.id === id);
}

/** Waits until `hook` has a delivery of `type` about `id` and answers the first. */
export function arrival(hook: CreatedWebhook, type: string, id: string, timeoutMs = 10_000): Promise<Delivered> {
  return waitFor(async () => (await about(hook, type, id))[0], timeoutMs, `${type} for ${id} at ${hook.inbox}`);
}

/** Waits until `hook` has a delivery of `type` whose data matches `pick`, and answers it. */
export function arrivalWhere(hook: CreatedWebhook, type: string, pick: (d: Delivered) => boolean, timeoutMs = 10_000): Promise<Delivered> {
  return waitFor(async () => (await delivered(hook)).find((d) => d.type === type && pick(d)), timeoutMs, `${type} at ${hook.inbox}`);
}

/**
 * The webhooks one event type is judged against: for account `a`, one on every type, one on exactly
 * this type, one on every other type but this one, a disabled one, optionally one filtered to the
 * event's session and one to another session; and one of account `b` on every type.
 */
export interface Fixture {
  all: CreatedWebhook;
  typed: CreatedWebhook;
  otherTypes: CreatedWebhook;
  disabled: CreatedWebhook;
  sameSession: CreatedWebhook | null;
  otherSession: CreatedWebhook | null;
  otherAccount: CreatedWebhook;
}

const ALL_TYPES: readonly string[] = EVENT_TYPES;

export async function fixture(a: TestKey, b: TestKey, types: string[], sessions: { same?: string; other?: string } = {}): Promise<Fixture> {
  return {
    all: await registerWebhook(a, { events: ["*"] }),
    typed: await registerWebhook(a, { events: types }),
    otherTypes: await registerWebhook(a, { events: ALL_TYPES.filter((t) => !types.includes(t)) }),
    disabled: await registerWebhook(a, { events: ["*"], enabled: false }),
    sameSession: sessions.same ? await registerWebhook(a, { events: ["*"], sessionId: sessions.same }) : null,
    otherSession: sessions.other ? await registerWebhook(a, { events: ["*"], sessionId: sessions.other }) : null,
    otherAccount: await registerWebhook(b, { events: ["*"] }),
  };
}

/** The two accounts of a fixture: `a` whose events are judged, `b` another one. */
export async function twoAccounts(): Promise<{ a: TestKey; b: TestKey }> {
  return { a: await createKey(), b: await createKey() };
}

/**
 * For an event on the fixture's `same` session (or with no session when the fixture has none):
 * the webhooks that must get it and those that must not, when it is of one of the fixture's types
 * or (`ofType` false) of another type.
 */
export function targets(f: Fixture, ofType = true): [matching: CreatedWebhook[], notMatching: CreatedWebhook[]] {
  const [wants, refuses] = ofType ? [f.typed, f.otherTypes] : [f.otherTypes, f.typed];
  const present = (hooks: Array<CreatedWebhook | null>) => hooks.filter((h): h is CreatedWebhook => h !== null);
  return [present([f.all, wants, f.sameSession]), present([refuses, f.disabled, f.otherSession, f.otherAccount])];
}

/**
 * Asserts (after the caller let stray deliveries settle) that the event of `type` about `id` went
 * exactly once to each matching webhook, verified, with the same `webhook-id` everywhere, and to no
 * other. Answers the data delivered.
 */
export async function expectExactlyOnce(matching: CreatedWebhook[], notMatching: CreatedWebhook[], type: string, id: string): Promise<Delivered> {
  const got: Delivered[] = [];
  for (const hook of matching) {
    const list = await about(hook, type, id);
    expect(list, `${type} ${id} at ${hook.inbox} (events ${hook.events.join(",")}, session ${hook.sessionId})`).toHaveLength(1);
    expect(list[0]!.verified).toBe(true);
    got.push(list[0]!);
  }
  for (const hook of notMatching) {
    expect(await about(hook, type, id), `${type} ${id} must not reach ${hook.inbox} (events ${hook.events.join(",")}, session ${hook.sessionId}, enabled ${hook.enabled})`).toEqual([]);
  }
  expect(new Set(got.map((g) => g.webhookId)).size).toBe(1);
  for (const g of got) expect(g.data).toEqual(got[0]!.data);
  return got[0]!;
}

export const receiptDelays = () => ({ delivered: Number(env.SANDBOX_DELIVERED_MS), read: Number(env.SANDBOX_READ_MS) });
