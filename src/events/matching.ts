/** The fields of a webhook that decide whether an event goes to it. */
export interface WebhookFilter {
  enabled: boolean;
  events: string[];
  sessionId: string | null;
}

/** An enabled webhook gets an event when its filter names the type (or `*`) and its session filter, if any, is the event's session. */
export function webhookMatches(hook: WebhookFilter, event: { type: string; sessionId: string | null }): boolean {
  if (!hook.enabled) return false;
  if (!hook.events.includes("*") && !hook.events.includes(event.type)) return false;
  return hook.sessionId === null || hook.sessionId === event.sessionId;
}
