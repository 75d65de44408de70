import type { Network } from "./sessions/schemas.ts";

/** Sandbox sessions get numbers in +1 555 01x xxxx (a fictional range), never in the 999 range. */
const SANDBOX_PREFIX = "155501";

export function newSandboxNumber(): string {
  const bytes = crypto.getRandomValues(new Uint32Array(1));
  return `${SANDBOX_PREFIX}${String(bytes[0]! % 100_000).padStart(5, "0")}`;
}

export function isSandboxNumber(digits: string): boolean {
  return digits.startsWith(SANDBOX_PREFIX) && digits.length === SANDBOX_PREFIX.length + 5;
}

/** What the rest of messaging needs to know of a network, so that it never asks which one it is. */
export interface NetworkTraits {
  /** A phone number assigned at creation, or null when it is learnt on connect. */
  newPhoneNumber(): string | null;
  /** Sends per minute of a session that sets none (null = unpaced). */
  defaultSendRate: number | null;
  /** Sessions carry credentials and receive the network's webhook at this path. */
  webhookPath: ((sessionId: string) => string) | null;
}

export const NETWORKS: Record<Network, NetworkTraits> = {
  sandbox: { newPhoneNumber: newSandboxNumber, defaultSendRate: null, webhookPath: null },
  whatsapp: { newPhoneNumber: () => null, defaultSendRate: 60, webhookPath: (id) => `/hooks/whatsapp/${id}` },
};
