import { z } from "zod";

/**
 * The Worker's [vars] (wrangler.toml, `.dev.vars`, test bindings), parsed once per env object into
 * typed values with their defaults. A value that is missing or does not parse takes the default, so
 * a typo in a var never takes the Worker down. Every module reads its settings from `config(env)`.
 */

/** Seconds between webhook (and compile callback) attempts: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
// about 3 days and 3 hours in all (Standard Webhooks' example and Stripe retry for about 3 days): a receiver
// that is down over a weekend still gets every event
export const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400];

/**
 * How long a fan-out or an attempt in flight holds its events or delivery: what a consumer that dies
 * mid-way (an isolate lost, a host stopped hard) delays them by before another takes them over.
 */
export const DEFAULT_WEBHOOK_LEASE_MS = 60_000;
/** A lease covers an attempt's timeout plus this much (recording its outcome, a wait at the endpoint's gate). */
const LEASE_OVER_TIMEOUT_MS = 20_000;

const text = (fallback: string) => z.string().optional().transform((v) => v ?? fallback);
const flag = z
  .string()
  .optional()
  .transform((v) => v === "1");
/** A number > 0 (finite), else the fallback. */
const positive = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((raw) => {
      const n = Number(raw);
      return raw !== undefined && raw.trim() !== "" && Number.isFinite(n) && n > 0 ? n : fallback;
    });
/** An integer > 0, else the fallback. */
const positiveInt = (fallback: number) => positive(fallback).transform((n) => (Number.isInteger(n) ? n : fallback));
/** Comma-separated seconds >= 0; empty or any bad part gives the default. */
const schedule = z
  .string()
  .optional()
  .transform((raw) => {
    const v = raw?.trim();
    if (!v) return DEFAULT_RETRY_SCHEDULE;
    const parts = v.split(",").map((s) => Number(s.trim()));
    return parts.some((n) => !Number.isFinite(n) || n < 0) ? DEFAULT_RETRY_SCHEDULE : parts;
  });

/** Days to keep rows: "" or "0" keeps them forever (null); junk takes the default. */
const retentionDays = (fallback: number | null) =>
  z
    .string()
    .optional()
    .transform((raw) => {
      if (raw === undefined) return fallback;
      const text = raw.trim();
      if (text === "" || text === "0") return null;
      const n = Number(text);
      return Number.isFinite(n) && n > 0 ? n : fallback;
    });

const Vars = z.object({
  COMPILER_URL: text(""),
  COMPILER_INSTANCES: positiveInt(4),
  COMPILE_CACHE_TTL_SECONDS: positiveInt(7 * 24 * 3600),
  ALLOW_LOOPBACK_URLS: flag,
  /** Deprecated name of ALLOW_LOOPBACK_URLS, still honoured. */
  WEBHOOK_ALLOW_LOOPBACK: flag,
  WEBHOOK_RETRY_SCHEDULE: schedule,
  WEBHOOK_TIMEOUT_MS: positive(15_000),
  WEBHOOK_LEASE_MS: positive(DEFAULT_WEBHOOK_LEASE_MS),
  WEBHOOK_DISABLE_AFTER_DAYS: positive(5),
  WEBHOOK_SECRET_GRACE_HOURS: positive(24),
  SANDBOX_DELIVERED_MS: positive(200),
  SANDBOX_READ_MS: positive(1000),
  SANDBOX_TEMPLATE_APPROVAL_MS: positive(2000),
  GRAPH_API_BASE_URL: text("https://graph.facebook.com/v23.0"),
  GRAPH_API_TIMEOUT_MS: positive(15_000),
  UNAUTH_RATE_LIMIT_PER_MIN: positive(60),
  HOOK_RATE_LIMIT_PER_MIN: positive(600),
  ENTERPRISE_MAX_ACTIVE_KEYS: positiveInt(100),
  RETENTION_EVENTS_DAYS: retentionDays(30),
  RETENTION_WEBHOOK_DELIVERIES_DAYS: retentionDays(30),
  RETENTION_WEBHOOK_ATTEMPTS_DAYS: retentionDays(30),
  RETENTION_COMPILE_JOBS_DAYS: retentionDays(7),
  RETENTION_MESSAGES_DAYS: retentionDays(null),
  NEW_ACCOUNT_SHARDS: text(""),
  // compile assets: per plan, the bytes and files an account may keep; days an unused asset is kept
  ASSET_QUOTA_BYTES_FREE: positiveInt(100 * 1024 * 1024),
  ASSET_QUOTA_BYTES_PRO: positiveInt(2 * 1024 * 1024 * 1024),
  ASSET_QUOTA_BYTES_ENTERPRISE: positiveInt(20 * 1024 * 1024 * 1024),
  ASSET_QUOTA_FILES_FREE: positiveInt(1_000),
  ASSET_QUOTA_FILES_PRO: positiveInt(20_000),
  ASSET_QUOTA_FILES_ENTERPRISE: positiveInt(100_000),
  ASSET_IDLE_DAYS: retentionDays(30),
});

/** Days each table keeps its rows (null: forever), by the var that sets it. */
export type Retention = Pick<z.infer<typeof Vars>, "RETENTION_EVENTS_DAYS" | "RETENTION_WEBHOOK_DELIVERIES_DAYS" | "RETENTION_WEBHOOK_ATTEMPTS_DAYS" | "RETENTION_COMPILE_JOBS_DAYS" | "RETENTION_MESSAGES_DAYS">;

export interface Config {
  compile: { compilerUrl: string; instances: number; cacheTtlSeconds: number };
  /** Compile assets: what each plan may keep, and how long an unused asset stays (null: until deleted). */
  assets: { quota: Record<"free" | "pro" | "enterprise", { bytes: number; files: number }>; idleMs: number | null };
  /** Outbound URLs (webhooks, compile callbacks, media to fetch) may point at loopback: dev and tests only. */
  allowLoopbackUrls: boolean;
  /** leaseMs: WEBHOOK_LEASE_MS, raised to the timeout + 20 s where set lower (a lease must outlast its attempt). */
  webhooks: { retrySchedule: number[]; timeoutMs: number; leaseMs: number; disableAfterMs: number; secretGraceMs: number };
  /** templateApprovalMs: how long a sandbox template stays PENDING before it is APPROVED. */
  sandbox: { deliveredMs: number; readMs: number; templateApprovalMs: number };
  graphApiBaseUrl: string;
  /** How long a Graph API call may take; a send still unanswered then has an unknown outcome. */
  graphApiTimeoutMs: number;
  rateLimits: { unauthenticatedPerMinute: number; hooksPerMinute: number };
  /** Most active API keys an enterprise account may hold. */
  enterpriseMaxActiveKeys: number;
  retention: Retention;
  /**
   * The shard databases: `SHARD_0`, `SHARD_1`, ... as bound (indices from 0 without a gap; none bound
   * means the directory `DB` is the one shard). `newAccountShards`: where new accounts go, from
   * NEW_ACCOUNT_SHARDS ("0,1"); empty, or naming no bound shard, means every shard.
   */
  shards: { count: number; newAccountShards: number[] };
}

/** Shard bindings present in `env`: SHARD_0 .. SHARD_<n-1>, stopping at the first gap. */
export function shardBindings(env: Record<string, unknown>): number {
  let n = 0;
  while (n < 1024 && isD1(env[`SHARD_${n}`])) n++;
  return n;
}

const isD1 = (v: unknown): boolean => typeof v === "object" && v !== null && typeof (v as { prepare?: unknown }).prepare === "function";

/** NEW_ACCOUNT_SHARDS ("0,1") against the bound shards: unknown or junk parts dropped, nothing left = all. */
export function parseNewAccountShards(raw: string, count: number): number[] {
  const all = Array.from({ length: Math.max(1, count) }, (_, i) => i);
  const picked = [...new Set(raw.split(",").map((s) => s.trim()).filter((s) => /^\d{1,4}$/.test(s)).map(Number))].filter((n) => n < Math.max(1, count));
  return picked.length ? picked.sort((a, b) => a - b) : all;
}

const cache = new WeakMap<object, Config>();

/** `env` is the Worker's Env (typed loosely so that Node scripts sharing these modules can call it too). */
export function config(env: object): Config {
  const hit = cache.get(env);
  if (hit) return hit;
  const raw = env as unknown as Record<string, unknown>;
  const strings = Object.fromEntries(Object.keys(Vars.shape).map((k) => [k, typeof raw[k] === "string" ? raw[k] : undefined]));
  const v = Vars.parse(strings);
  const parsed: Config = {
    compile: { compilerUrl: v.COMPILER_URL, instances: v.COMPILER_INSTANCES, cacheTtlSeconds: v.COMPILE_CACHE_TTL_SECONDS },
    assets: {
      quota: {
        free: { bytes: v.ASSET_QUOTA_BYTES_FREE, files: v.ASSET_QUOTA_FILES_FREE },
        pro: { bytes: v.ASSET_QUOTA_BYTES_PRO, files: v.ASSET_QUOTA_FILES_PRO },
        enterprise: { bytes: v.ASSET_QUOTA_BYTES_ENTERPRISE, files: v.ASSET_QUOTA_FILES_ENTERPRISE },
      },
      idleMs: v.ASSET_IDLE_DAYS === null ? null : v.ASSET_IDLE_DAYS * 86_400_000,
    },
    allowLoopbackUrls: v.ALLOW_LOOPBACK_URLS || v.WEBHOOK_ALLOW_LOOPBACK,
    webhooks: {
      retrySchedule: v.WEBHOOK_RETRY_SCHEDULE,
      timeoutMs: v.WEBHOOK_TIMEOUT_MS,
      leaseMs: Math.max(v.WEBHOOK_LEASE_MS, v.WEBHOOK_TIMEOUT_MS + LEASE_OVER_TIMEOUT_MS),
      disableAfterMs: v.WEBHOOK_DISABLE_AFTER_DAYS * 86400_000,
      secretGraceMs: v.WEBHOOK_SECRET_GRACE_HOURS * 3600_000,
    },
    sandbox: { deliveredMs: v.SANDBOX_DELIVERED_MS, readMs: v.SANDBOX_READ_MS, templateApprovalMs: v.SANDBOX_TEMPLATE_APPROVAL_MS },
    graphApiBaseUrl: v.GRAPH_API_BASE_URL,
    graphApiTimeoutMs: v.GRAPH_API_TIMEOUT_MS,
    rateLimits: { unauthenticatedPerMinute: v.UNAUTH_RATE_LIMIT_PER_MIN, hooksPerMinute: v.HOOK_RATE_LIMIT_PER_MIN },
    enterpriseMaxActiveKeys: v.ENTERPRISE_MAX_ACTIVE_KEYS,
    retention: {
      RETENTION_EVENTS_DAYS: v.RETENTION_EVENTS_DAYS,
      RETENTION_WEBHOOK_DELIVERIES_DAYS: v.RETENTION_WEBHOOK_DELIVERIES_DAYS,
      RETENTION_WEBHOOK_ATTEMPTS_DAYS: v.RETENTION_WEBHOOK_ATTEMPTS_DAYS,
      RETENTION_COMPILE_JOBS_DAYS: v.RETENTION_COMPILE_JOBS_DAYS,
      RETENTION_MESSAGES_DAYS: v.RETENTION_MESSAGES_DAYS,
    },
    shards: (() => {
      const count = shardBindings(raw);
      return { count: Math.max(1, count), newAccountShards: parseNewAccountShards(v.NEW_ACCOUNT_SHARDS, count) };
    })(),
  };
  cache.set(env, parsed);
  return parsed;
}
