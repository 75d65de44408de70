import { createRouter } from "../platform/openapi.ts";

export { SessionDO } from "./sessions/session-do.ts";

/** /api/sessions, /api/messages, /api/contacts (issue 5). */
export const messagingRoutes = createRouter();

/** Public, unauthenticated network callbacks under /hooks/ (e.g. Meta's webhook), issue 5. */
export const messagingHookRoutes = createRouter();

/** Sends queue: bulk sends and campaign recipients (issues 5 and 7). */
export async function handleSendQueue(batch: MessageBatch<unknown>, _env: Env, _ctx: ExecutionContext): Promise<void> {
  batch.ackAll();
}

export async function onCronMessaging(_env: Env, _now: number): Promise<void> {}
