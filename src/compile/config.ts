import type { Compiler } from "./compiler.ts";
import { ContainerCompiler } from "./compiler-container.ts";
import { UrlCompiler } from "./compiler-url.ts";
import type { TexContainer } from "./container.ts";
import { DEFAULT_CACHE_TTL_SECONDS } from "./limits.ts";

/** Optional [vars] of the compile service (wrangler.toml), with their defaults. */
type CompileVars = { COMPILER_URL?: string; COMPILER_INSTANCES?: string; COMPILE_CACHE_TTL_SECONDS?: string };

function positiveInt(raw: string | undefined, fallback: number): number {
  const n = Number(raw);
  return raw !== undefined && raw !== "" && Number.isInteger(n) && n > 0 ? n : fallback;
}

export function cacheTtlSeconds(env: Env): number {
  return positiveInt((env as CompileVars).COMPILE_CACHE_TTL_SECONDS, DEFAULT_CACHE_TTL_SECONDS);
}

/**
 * The transport is configuration: a non-empty COMPILER_URL means the natively run compile server
 * (dev, tests); empty means the TEX_CONTAINER binding (deployed).
 */
export function compilerFor(env: Env): Compiler {
  const vars = env as CompileVars;
  if (vars.COMPILER_URL) return new UrlCompiler(vars.COMPILER_URL);
  return new ContainerCompiler(env.TEX_CONTAINER as unknown as DurableObjectNamespace<TexContainer>, positiveInt(vars.COMPILER_INSTANCES, 4));
}
