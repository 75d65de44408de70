import { createRouter } from "../platform/openapi.ts";

export { TexContainer } from "./container.ts";

/** /v1/compile routes (issue 4). */
export const compileRoutes = createRouter();

/** Async compile jobs queue (issue 4). */
export async function handleCompileQueue(batch: MessageBatch<unknown>, _env: Env, _ctx: ExecutionContext): Promise<void> {
  batch.ackAll();
}

export async function onCronCompile(_env: Env, _now: number): Promise<void> {}
