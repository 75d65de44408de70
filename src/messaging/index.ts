import { createRouter } from "../platform/openapi.ts";
import { chatRoutes } from "./chats/router.ts";
import { contactRoutes } from "./contacts/router.ts";
import { messageRoutes } from "./messages/router.ts";
import { sessionRoutes } from "./sessions/router.ts";
import { templateRoutes } from "./templates/router.ts";
import { sweepPendingMedia } from "./media/sweep.ts";

export { SessionDO } from "./sessions/session-do.ts";
export { PortfolioDO } from "./sessions/portfolio-do.ts";
export { wireCampaignHooks } from "./sessions/campaign-hooks.ts";
export { sendMessage, queueMessages, type SendInput, type SendOptions } from "./messages/service.ts";
export { enqueueSendJobs, sendQueueConsumer, type SendJob } from "./queue/send-queue.ts";
export { runBulkJob, runMediaJob } from "./sessions/jobs.ts";

/** /api/sessions (and their templates), /api/messages, /api/contacts, /api/chats. */
export const messagingRoutes = createRouter().route("/", sessionRoutes).route("/", templateRoutes).route("/", messageRoutes).route("/", contactRoutes).route("/", chatRoutes);

/** Public, unauthenticated network callbacks under /hooks/ (Meta's webhook, signed media URLs). */
export { hookRoutes as messagingHookRoutes } from "./hooks/router.ts";

/** The every-minute cron: inbound files left pending are fetched again (media/sweep.ts). */
export async function onCronMessaging(env: Env, now: number): Promise<void> {
  await sweepPendingMedia(env, now);
}
