import type { Plan } from "./plans.ts";

/** What the auth middleware learns about the caller. */
export interface AuthContext {
  accountId: string;
  accountName: string;
  accountCreatedAt: number;
  keyId: string;
  plan: Plan;
  /** Requests per minute for this key's account. */
  limitPerMinute: number;
  /** The account's shard database (`accounts.shard`): request handlers reach it without another query. */
  shard: number;
}

export type AppVariables = {
  requestId: string;
  auth: AuthContext;
  /** Why a credential other than the Authorization header (a stream ticket) was refused: requireAuth's 401 says so. */
  authFailure?: string;
  apiVersion: string;
  /** Route template for logs, set by the logger once routing is done. */
  startedAt: number;
  /** Steps recorded for the `Server-Timing` header. */
  timings: Timings;
};

/** Steps of a request, named, with their milliseconds (src/platform/server-timing.ts writes them out). */
export type Timings = { name: string; ms: number }[];

export type AppEnv = { Bindings: Env; Variables: AppVariables };
