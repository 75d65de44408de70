import { log } from "../platform/log.ts";
import type { Gate } from "./send-gate.ts";

// An attempt's wait at its endpoint's gate, in the Worker: the gate itself (send-gate.ts) is plain
// logic, tested in Node on a faked clock.

/** Reports a gated attempt over (its answer came, or it failed): when its request had surely arrived. */
export type Landed = () => Promise<void>;

/**
 * Waits for a throttled attempt's turn at its endpoint's gate: the throttle object's own (its alarm
 * makes the attempt), else by RPC to the endpoint's object. An object that cannot be asked leaves
 * the attempt to its slot alone (logged): late rather than lost. Answers how to report the attempt
 * landed (a report that fails costs the gate no more than LANDED_CAP_MS).
 */
export async function waitForTurn(env: Env, gate: Gate | undefined, deliveryId: string, webhookId: string, perSecond: number, notBefore: number): Promise<Landed> {
  if (gate) {
    await gate.wait(deliveryId, notBefore);
    return async () => gate.landed(deliveryId, Date.now());
  }
  const stub = env.WEBHOOK_THROTTLES.get(env.WEBHOOK_THROTTLES.idFromName(webhookId));
  try {
    const ticket = await stub.admit(perSecond, notBefore);
    return async () => {
      await stub.landed(ticket, Date.now()).catch((err: unknown) => log.warn("webhook throttle: landing not reported", { webhookId, error: String(err) }));
    };
  } catch (err) {
    log.error("webhook throttle gate unavailable; attempt made at its slot", { webhookId, error: String(err) });
    if (notBefore > Date.now()) await new Promise((r) => setTimeout(r, notBefore - Date.now()));
    return async () => {};
  }
}
