import type { Network, WhatsappCredentials } from "../sessions/schemas.ts";
import type { NetworkDriver, NetworkHost } from "./driver.ts";
import { SandboxDriver } from "./sandbox.ts";
import { WhatsappDriver } from "./whatsapp.ts";

/** The driver of a session's network: the one place that maps a network name to its code. */
export function createDriver(host: NetworkHost, network: Network, phoneNumber: string | null, credentials: WhatsappCredentials | null): NetworkDriver {
  const drivers: Record<Network, () => NetworkDriver> = {
    sandbox: () => new SandboxDriver(phoneNumber ?? "", host),
    whatsapp: () => new WhatsappDriver(host.config().graphApiBaseUrl, credentials, host, host.config().graphApiTimeoutMs),
  };
  return drivers[network]();
}
