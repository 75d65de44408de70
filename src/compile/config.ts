import type { Compiler } from "./compiler.ts";
import { ContainerCompiler } from "./compiler-container.ts";
import { UrlCompiler } from "./compiler-url.ts";
import type { TexContainer } from "./container.ts";
import { config } from "../platform/config.ts";

export function cacheTtlSeconds(env: Env): number {
  return config(env).compile.cacheTtlSeconds;
}

/**
 * The transport is configuration: a non-empty COMPILER_URL means the natively run compile server
 * (dev, tests); empty means the TEX_CONTAINER binding (deployed).
 */
export function compilerFor(env: Env): Compiler {
  const { compilerUrl, instances } = config(env).compile;
  if (compilerUrl) return new UrlCompiler(compilerUrl);
  return new ContainerCompiler(env.TEX_CONTAINER as unknown as DurableObjectNamespace<TexContainer>, instances);
}
