import { log } from "../../platform/log.ts";
import { recordInbound } from "../messages/inbound.ts";
import { advanceStatus } from "../messages/store.ts";
import type { WhatsappCredentials } from "../sessions/schemas.ts";
import type { HookRequest, SessionContext } from "./driver.ts";
import { parseWebhook, verifyHubSignature } from "./whatsapp.ts";

/** Meta's webhook for one session: the verification handshake (GET) and signed events (POST). */
export async function handleWhatsappWebhook(session: SessionContext, creds: WhatsappCredentials, req: HookRequest): Promise<{ status: number; body: string }> {
  if (req.method === "GET") {
    const ok = req.query["hub.mode"] === "subscribe" && req.query["hub.verify_token"] === creds.verifyToken && req.query["hub.challenge"];
    return ok ? { status: 200, body: req.query["hub.challenge"]! } : { status: 403, body: "" };
  }
  if (!(await verifyHubSignature(creds.appSecret, req.rawBody, req.signature))) return { status: 401, body: "" };
  let payload: unknown;
  try {
    payload = JSON.parse(req.rawBody);
  } catch {
    return { status: 400, body: "" };
  }
  const { env } = session;
  const { accountId, sessionId } = session.identity();
  const parsed = parseWebhook(payload, creds.phoneNumberId);
  if (parsed.otherNumber > 0) {
    // Signed by this app but for another of its numbers: most likely the app's callback URL points here for all of them.
    log.warn("whatsapp changes for another phone number skipped", { sessionId, changes: parsed.otherNumber });
  }
  if (parsed.skipped > 0) log.warn("whatsapp webhook items without id, sender or type skipped", { sessionId, skipped: parsed.skipped });
  const unsupported = parsed.messages.filter((m) => m.type === "unsupported").length;
  if (unsupported > 0) log.info("whatsapp messages of unsupported types stored", { sessionId, unsupported });
  for (const m of parsed.messages) await recordInbound(env, accountId, sessionId, m, { fetchNow: (id) => session.fetchMediaNow(id) });
  // Oldest first: with conditional updates the order does not matter for the end state, but
  // events then come out in the order the network produced them where it can.
  const statuses = parsed.statuses.sort((a, b) => a.timestamp - b.timestamp);
  for (const s of statuses) {
    await advanceStatus(env, accountId, sessionId, { externalIds: [s.externalId] }, s.status, s.timestamp, s.error);
  }
  return { status: 200, body: "" };
}
