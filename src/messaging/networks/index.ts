import { config } from "../../platform/config.ts";
import type { Network, WhatsappCredentials } from "../sessions/schemas.ts";
import type { NetworkDriver, SessionContext } from "./driver.ts";
import { newSandboxNumber, SandboxDriver } from "./sandbox.ts";
import { WhatsappDriver } from "./whatsapp.ts";

/** The driver of a session's network: the one place that maps a network name to its code. */
export function createDriver(session: SessionContext, network: Network, phoneNumber: string | null, credentials: WhatsappCredentials | null): NetworkDriver {
  const drivers: Record<Network, () => NetworkDriver> = {
    sandbox: () => new SandboxDriver(phoneNumber ?? "", session),
    whatsapp: () => new WhatsappDriver(config(session.env).graphApiBaseUrl, credentials, session, config(session.env).graphApiTimeoutMs),
  };
  return drivers[network]();
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
