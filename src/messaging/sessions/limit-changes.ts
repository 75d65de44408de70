import type { SendLimitsInput } from "../send-limits.ts";
import { portfolioStub, type PortfolioDO } from "./portfolio-do.ts";
import { MESSAGING_TIERS, type SessionStatus } from "./schemas.ts";
import { writeSessionLimits } from "./state.ts";
import { KeyedSerial, portfolioOf, type SessionConfig } from "./types.ts";

/** What limit changes need of their Session DO. */
export interface LimitChangesHost {
  readonly env: Env;
  config(): SessionConfig | null;
  status(): SessionStatus;
  /** Keeps the config (in memory and storage) without resetting the driver. */
  saveConfig(config: SessionConfig): Promise<void>;
  /** Sends held back under the old limits are looked at again now. */
  wakeHeldSends(now: number): Promise<void>;
}

/**
 * A session's limits after creation: `PATCH /api/sessions/:id`, and the tier its portfolio's other
 * sessions hand it (Meta's tier is the portfolio's). One change at a time, merged where sends read them.
 */
export class LimitChanges {
  private readonly serial = new KeyedSerial();

  constructor(private readonly host: LimitChangesHost) {}

  /** The session's limits from now (the service validated the patch); null: not this account's, or stopped. */
  set(accountId: string, patch: SendLimitsInput): Promise<SendLimitsInput | null> {
    return this.serial.run("limits", () => this.change(accountId, patch));
  }

  /** The business portfolio this session shares its messaging limit with (null: none), if it is the account's. */
  portfolioId(accountId: string): string | null {
    const cfg = this.host.config();
    return cfg && cfg.accountId === accountId ? portfolioOf(cfg) : null;
  }

  /** A tier set on another session of the portfolio (ignored unless this session is the account's, in that portfolio, and not stopped). */
  async portfolioTier(accountId: string, portfolio: string, messagingLimit: number | "unlimited"): Promise<boolean> {
    const cfg = this.host.config();
    if (!cfg || portfolioOf(cfg) !== portfolio) return false;
    // A sandbox session's limit may be any number; a WhatsApp number's is one of Meta's tiers.
    if (cfg.network === "whatsapp" && typeof messagingLimit === "number" && !(MESSAGING_TIERS as readonly number[]).includes(messagingLimit)) return false;
    return (await this.set(accountId, { messagingLimit })) !== null;
  }

  /** The portfolio object whose window this session shares (its account's, by `businessAccountId`), or null. */
  portfolio(): DurableObjectStub<PortfolioDO> | null {
    const cfg = this.host.config();
    const id = cfg ? portfolioOf(cfg) : null;
    return cfg && id ? portfolioStub(this.host.env, cfg.accountId, id) : null;
  }

  private async change(accountId: string, patch: SendLimitsInput): Promise<SendLimitsInput | null> {
    const cfg = this.host.config();
    if (!cfg || cfg.accountId !== accountId || this.host.status() === "STOPPED") return null;
    // Merged here, where sends read them, so two updates at once cannot undo each other's fields.
    const limits = { ...cfg.limits, ...patch };
    await this.host.saveConfig({ ...cfg, limits });
    await writeSessionLimits(this.host.env, accountId, cfg.sessionId, limits);
    // Sends held back under the old limits are looked at again under the new ones (those still over wait again).
    await this.host.wakeHeldSends(Date.now());
    return limits;
  }
}
