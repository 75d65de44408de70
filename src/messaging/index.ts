import { createRouter } from "../platform/openapi.ts";
import { chatsRouter } from "./chats/router.ts";
import { mountContacts } from "./contacts/handlers.ts";
import { mountHooks } from "./hooks.ts";
import { registerMediaJob } from "./media/inbound.ts";
import { mountMessages } from "./messages/handlers.ts";
import { mountSessions } from "./sessions/handlers.ts";

export { SessionDO } from "./sessions/session-do.ts";
export { sendMessage, queueMessages, type SendInput, type SendOptions } from "./messages/service.ts";
export { registerSendJob, enqueueSendJobs, handleSendQueue, type SendJob } from "./queue/send-queue.ts";

// The `media` job of the sends queue: inbound files fetched into R2.
registerMediaJob();

/** /api/sessions, /api/messages, /api/contacts, /api/chats. */
export const messagingRoutes = createRouter();
mountSessions(messagingRoutes);
mountMessages(messagingRoutes);
mountContacts(messagingRoutes);
messagingRoutes.route("/", chatsRouter);

/** Public, unauthenticated network callbacks under /hooks/ (Meta's webhook, signed media URLs). */
export const messagingHookRoutes = createRouter();
mountHooks(messagingHookRoutes);

export async function onCronMessaging(_env: Env, _now: number): Promise<void> {}
