import type { EventTypeDescriptions } from "../events/catalog/index.ts";
import { Campaign } from "./campaigns/schemas.ts";
import { Call } from "./calls.ts";
import { Contact, IdentityChange } from "./contacts/schemas.ts";
import { Message } from "./messages/schemas.ts";
import { Session } from "./sessions/schemas.ts";
import { Template } from "./templates/schemas.ts";

// What each messaging event means and carries: `data` is the resource as the REST API returns it at
// that moment, so its schema is the resource's own (one source for the API, the catalog and /docs).

const at = "2026-01-15T09:30:00.000Z";
const message = {
  id: "msg_0m3x9k2a1b2c3d4e5f6g7h8",
  sessionId: "ses_0m3x9k2a1b2c3d4e5f6g7h8",
  chatId: "14155550123@c.us",
  direction: "outbound",
  type: "text",
  text: "Your order has shipped.",
  status: "sent",
  replyTo: null,
  batchId: null,
  campaignId: null,
  createdAt: at,
  sentAt: at,
  deliveredAt: null,
  readAt: null,
};
const inbound = { ...message, id: "msg_0m3x9k2a1b2c3d4e5f6g7h9", direction: "inbound", text: "Where is my order?", status: "received", sentAt: null };
const media = { url: null, mimetype: "image/jpeg", filename: null, caption: "The parcel", size: 48213 };
const session = {
  id: "ses_0m3x9k2a1b2c3d4e5f6g7h8",
  name: "Support line",
  network: "whatsapp",
  status: "WORKING",
  statusReason: null,
  phoneNumber: "+15550100234",
  me: { chatId: "15550100234@c.us" },
  credentials: { set: true, phoneNumberId: "106540352242922" },
  webhookPath: "/hooks/whatsapp/ses_0m3x9k2a1b2c3d4e5f6g7h8",
  sendRatePerMinute: null,
  limits: { throughputPerSecond: 80, pairIntervalMs: 6000, pairBurst: 45, messagingLimit: 250 },
  health: null,
  createdAt: at,
  updatedAt: at,
};
const stats = { total: 2, pending: 0, sent: 0, delivered: 1, read: 1, failed: 0, skipped: 0, charges: { billable: 2, byCategory: { marketing: 2 } } };

export const MESSAGING_EVENT_TYPES: EventTypeDescriptions = {
  "message.received": { description: "A message arrived on a session (inbound).", data: Message, example: inbound },
  "message.sent": { description: "The network accepted an outbound message (`status: sent`).", data: Message, example: message },
  "message.delivered": { description: "An outbound message reached the recipient's phone.", data: Message, example: { ...message, status: "delivered", deliveredAt: at } },
  "message.read": { description: "The recipient read an outbound message.", data: Message, example: { ...message, status: "read", deliveredAt: at, readAt: at } },
  "message.edited": {
    description: "The sender edited an inbound message: its text (or its file's caption) is the new one, with `editedAt`.",
    data: Message,
    example: { ...inbound, text: "Where is my order #1234?", editedAt: at },
  },
  "message.deleted": {
    description: "The sender deleted an inbound message for everyone: its text, file and body are dropped, `deletedAt` is set.",
    data: Message,
    example: { ...inbound, text: undefined, deletedAt: at },
  },
  "message.media_stored": {
    description: "An inbound message's file was fetched from the network and is served by `GET /api/messages/{id}/media` (`media.status: stored`).",
    data: Message,
    example: { ...inbound, type: "image", text: undefined, media: { ...media, status: "stored" } },
  },
  "message.media_failed": {
    description: "An inbound message's file could not be stored (`media.status: failed`, with `media.reason`).",
    data: Message,
    example: { ...inbound, type: "image", text: undefined, media: { ...media, status: "failed", reason: "the network answered 404" } },
  },
  "session.connected": { description: "A session is `WORKING`: it can send and receive.", data: Session, example: session },
  "session.disconnected": {
    description: "A session left `WORKING` (`statusReason` says why, e.g. `invalid_token`).",
    data: Session,
    example: { ...session, status: "FAILED", statusReason: "invalid_token" },
  },
  "session.restricted": {
    description: "The network reported the business account restricted, banned or in violation (`health`); the session may still be `WORKING`.",
    data: Session,
    example: { ...session, health: { state: "restricted", event: "ACCOUNT_RESTRICTION", restrictions: [{ type: "RESTRICTED_ADD_PHONE_NUMBER_ACTION", expiresAt: "2026-01-22T09:30:00.000Z" }], at } },
  },
  "session.updated": {
    description: "A session's settings were changed (`PATCH /api/sessions/{id}`: its `limits`), or its business account is back in good standing (`health.state` `ok`).",
    data: Session,
    example: { ...session, limits: { ...session.limits, messagingLimit: 2000 } },
  },
  "contact.created": {
    description: "A contact was created, by the API or by the first message from a new number.",
    data: Contact,
    example: { id: "con_0m3x9k2a1b2c3d4e5f6g7h8", phone: "+14155550123", chatId: "14155550123@c.us", name: "Ada", email: null, tags: ["vip"], attributes: {}, optedOut: false, identity: null, createdAt: at, updatedAt: at },
  },
  "contact.identity_changed": {
    description: "The network said a person's number or BSUID changed (WhatsApp `system` messages), or named the number of a person known so far only by BSUID: the contact has the new ids; with a new number it and the session's chat (with its history) moved to it.",
    data: IdentityChange,
    example: {
      kind: "user_changed_number",
      sessionId: session.id,
      contact: { id: "con_0m3x9k2a1b2c3d4e5f6g7h8", phone: "+14155559999", chatId: "14155559999@c.us", name: "Ada", email: null, tags: [], attributes: {}, optedOut: false, identity: { userId: "US.13491208655302741918" }, createdAt: at, updatedAt: at },
      previous: { phone: "+14155550123", chatId: "14155550123@c.us", identity: { userId: "US.99991208655302741918" } },
      chatId: "14155559999@c.us",
      chatMoved: true,
    },
  },
  "call.started": {
    description: "A call on a session's number is ringing or connecting (WhatsApp `calls`, `connect`). Calls are events only, not messages.",
    data: Call,
    example: { id: "wacid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDQjZCMzlEQUE4OTJBMTE4RTUA", sessionId: session.id, chatId: "14155550123@c.us", direction: "inbound", event: "connect", status: null, startedAt: null, endedAt: null, durationSeconds: null, at },
  },
  "call.ended": {
    description: "A call on a session's number ended (`terminate`), with how (`status`) and how long.",
    data: Call,
    example: { id: "wacid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDQjZCMzlEQUE4OTJBMTE4RTUA", sessionId: session.id, chatId: "14155550123@c.us", direction: "inbound", event: "terminate", status: "COMPLETED", startedAt: at, endedAt: at, durationSeconds: 42, at },
  },
  "template.updated": {
    description: "The network changed a message template of a session: its review status (`APPROVED`, `REJECTED` with `rejectedReason`, `PAUSED`, ...), its quality or its category.",
    data: Template,
    example: {
      id: "tpl_0m3x9k2a1b2c3d4e5f6g7h8",
      sessionId: session.id,
      name: "order_confirmation",
      language: "en_US",
      networkId: "1689556908129832",
      status: "APPROVED",
      category: "UTILITY",
      components: [{ type: "BODY", text: "Hi {{1}}, your order {{2}} has shipped.", example: { body_text: [["Ada", "A-1042"]] } }],
      quality: "UNKNOWN",
      rejectedReason: null,
      syncedAt: at,
      createdAt: at,
      updatedAt: at,
    },
  },
  "campaign.completed": {
    description: "Every recipient of a campaign was sent or skipped (delivery and read counts keep updating).",
    data: Campaign,
    example: {
      id: "cmp_0m3x9k2a1b2c3d4e5f6g7h8",
      name: "Spring sale",
      sessionId: session.id,
      status: "completed",
      statusReason: null,
      message: { text: "Hi {{name|there}}, our spring sale starts today." },
      audience: { tags: ["vip"] },
      scheduledAt: null,
      pacing: null,
      stats,
      startedAt: at,
      completedAt: at,
      cancelledAt: null,
      etaSeconds: null,
      eta: null,
      createdAt: at,
      updatedAt: at,
    },
  },
};
