import { config } from "./config.ts";
export const PLANS = ["free", "pro", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

/** Requests per minute per API key. Enterprise accounts carry their own number. */
export const PLAN_LIMITS: Record<Exclude<Plan, "enterprise">, number> = { free: 100, pro: 1000 };
export const ENTERPRISE_DEFAULT_LIMIT = 10_000;

export function limitFor(plan: Plan, customLimit: number | null | undefined): number {
  if (plan === "enterprise") return customLimit && customLimit > 0 ? customLimit : ENTERPRISE_DEFAULT_LIMIT;
  return PLAN_LIMITS[plan];
}

/** Active (unrevoked) API keys an account may hold: each key has its own rate budget, so the plan caps them. */
export const PLAN_KEY_LIMITS: Record<Exclude<Plan, "enterprise">, number> = { free: 3, pro: 20 };
export const ENTERPRISE_DEFAULT_KEY_LIMIT = 100;

export type PlanVars = { ENTERPRISE_MAX_ACTIVE_KEYS?: string };

/** Enterprise accounts' cap, from `ENTERPRISE_MAX_ACTIVE_KEYS` ([vars]), parsed once per env. */
function enterpriseKeyLimit(env: PlanVars): number {
  return config(env).enterpriseMaxActiveKeys;
}

export function keyLimitFor(plan: Plan, env: PlanVars): number {
  return plan === "enterprise" ? enterpriseKeyLimit(env) : PLAN_KEY_LIMITS[plan];
}
