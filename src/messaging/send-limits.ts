/**
 * The sending limits a session applies (sessions/limits.ts keeps their state): what they are, Meta's
 * defaults for the Cloud API, and a session's settings over its network's defaults. Pure vocabulary,
 * so the session's view can show them.
 */
export interface SendLimits {
  throughputPerSecond: number | null;
  pairIntervalMs: number | null;
  pairBurst: number;
  /** Unique recipients outside the window per rolling 24 h; null: unlimited. */
  messagingLimit: number | null;
}

export type LimitName = "throughput" | "pair" | "messaging";

export const DAY_MS = 24 * 60 * 60 * 1000;

/** Meta's limits for a Cloud API number of a new portfolio (the tier starts at 250). */
export const META_LIMITS: SendLimits = { throughputPerSecond: 80, pairIntervalMs: 6_000, pairBurst: 45, messagingLimit: 250 };
/** The sandbox answers at once and limits nothing unless the session asks for limits. */
export const NO_LIMITS: SendLimits = { throughputPerSecond: null, pairIntervalMs: null, pairBurst: 1, messagingLimit: null };

/** What a session sets (any field left out takes its network's default). */
export type SendLimitsInput = Partial<Omit<SendLimits, "messagingLimit">> & { messagingLimit?: number | "unlimited" };

export function resolveLimits(defaults: SendLimits, input: SendLimitsInput | undefined): SendLimits {
  const tier = input?.messagingLimit;
  return {
    throughputPerSecond: input?.throughputPerSecond ?? defaults.throughputPerSecond,
    pairIntervalMs: input?.pairIntervalMs ?? defaults.pairIntervalMs,
    pairBurst: input?.pairBurst ?? (input?.pairIntervalMs && !defaults.pairIntervalMs ? 1 : defaults.pairBurst),
    messagingLimit: tier === "unlimited" ? null : (tier ?? defaults.messagingLimit),
  };
}

/** A session's limits: its own settings over its network's defaults. */
export function limitsFor(network: "sandbox" | "whatsapp", input: SendLimitsInput | undefined): SendLimits {
  return resolveLimits(network === "whatsapp" ? META_LIMITS : NO_LIMITS, input);
}
