import type { ConnectResult, NetworkDriver, OutboundMessage, SendResult } from "./driver.ts";

/** Numbers starting with this prefix have no account on the sandbox network (docs/contracts.md §3). */
export const NO_ACCOUNT_PREFIX = "999";

/** Sandbox sessions get numbers in +1 555 01x xxxx (a fictional range), never in the 999 range. */
const SANDBOX_PREFIX = "155501";

export function newSandboxNumber(): string {
  const bytes = crypto.getRandomValues(new Uint32Array(1));
  return `${SANDBOX_PREFIX}${String(bytes[0]! % 100_000).padStart(5, "0")}`;
}

export function isSandboxNumber(digits: string): boolean {
  return digits.startsWith(SANDBOX_PREFIX) && digits.length === SANDBOX_PREFIX.length + 5;
}

/** The built-in network: accepts at once; receipts are simulated by the Session DO's alarms. */
export class SandboxDriver implements NetworkDriver {
  constructor(private readonly phoneNumber: string) {}

  async connect(): Promise<ConnectResult> {
    return { ok: true, phoneNumber: this.phoneNumber };
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    return sandboxSend(message);
  }
}

export function sandboxSend(message: OutboundMessage): SendResult {
  if (message.to.startsWith(NO_ACCOUNT_PREFIX)) {
    return { ok: false, error: { code: "no_account", message: "The recipient has no account on the sandbox network." } };
  }
  return { ok: true, externalId: null };
}
