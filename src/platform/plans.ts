export const PLANS = ["free", "pro", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

/** Requests per minute per API key. Enterprise accounts carry their own number. */
export const PLAN_LIMITS: Record<Exclude<Plan, "enterprise">, number> = { free: 100, pro: 1000 };
export const ENTERPRISE_DEFAULT_LIMIT = 10_000;

export function limitFor(plan: Plan, customLimit: number | null | undefined): number {
  if (plan === "enterprise") return customLimit && customLimit > 0 ? customLimit : ENTERPRISE_DEFAULT_LIMIT;
  return PLAN_LIMITS[plan];
}
