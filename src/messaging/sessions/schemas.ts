import { z } from "@hono/zod-openapi";
import { boundedJson } from "../../platform/json-bounds.ts";
import { ButtonReply, Contacts, InteractiveReply, Location, MAX_UNSUPPORTED_RAW, Order } from "../messages/content.ts";
import { MediaItemFields } from "../messages/schemas.ts";
import { idParam } from "../../platform/openapi.ts";
import { Timestamps } from "../schema-fields.ts";

export const SESSION_STATUSES = ["STARTING", "WORKING", "FAILED", "STOPPED"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export type Network = "sandbox" | "whatsapp";

export const PHONE_NUMBER_ID = /^[0-9]{1,30}$/;

export const WhatsappCredentials = z
  .strictObject({
    phoneNumberId: z.string().regex(PHONE_NUMBER_ID, "digits only").openapi({ example: "106540352242922" }),
    businessAccountId: z.string().regex(PHONE_NUMBER_ID, "digits only").optional().openapi({ description: "The WhatsApp Business Account id (WABA) of the number: needed for message templates.", example: "102290129340398" }),
    accessToken: z.string().min(1).max(2048).openapi({ description: "A system user access token with `whatsapp_business_messaging`. Never shown again." }),
    appSecret: z.string().min(1).max(256).openapi({ description: "The Meta app secret: verifies `X-Hub-Signature-256` of inbound webhooks. Never shown again." }),
    verifyToken: z.string().min(1).max(256).openapi({ description: "Your verify token for Meta's webhook subscription (`hub.verify_token`). Never shown again." }),
  })
  .openapi("WhatsappCredentials");
export type WhatsappCredentials = z.infer<typeof WhatsappCredentials>;

/** Meta's messaging-limit tiers: unique users reached outside the customer-service window per rolling 24 hours. */
export const MESSAGING_TIERS = [250, 2000, 10000, 100000] as const;

export const SendLimitsBody = z
  .strictObject({
    throughputPerSecond: z.number().int().min(1).max(1000).optional().openapi({ description: "Messages per second through the number. whatsapp default 80 (Meta's; up to 1000 once Meta raises it)." }),
    pairIntervalMs: z.number().int().min(1).max(3_600_000).optional().openapi({ description: "Pair rate: one message to the same recipient per this many ms, after a burst. whatsapp default 6000." }),
    pairBurst: z.number().int().min(1).max(1000).optional().openapi({ description: "Pair rate: messages to one recipient allowed in a burst, then paid back one per `pairIntervalMs`. whatsapp default 45." }),
    messagingLimit: z
      .union([z.number().int().min(1).max(1_000_000), z.literal("unlimited")])
      .optional()
      .openapi({ description: "The portfolio's messaging limit: unique recipients of business-initiated messages (templates outside the 24-hour window) per rolling 24 hours. whatsapp: 250 (default), 2000, 10000, 100000 or `unlimited`; sandbox: any number." }),
  })
  .openapi("SessionSendLimits", { description: "The network's limits, applied by the session before the network applies them: a send over one waits in the session's queue. Omitted: the network's defaults (sandbox: none)." });

export const CreateSessionBody = z
  .strictObject({
    name: z.string().min(1).max(100).optional().openapi({ example: "support line" }),
    network: z.enum(["sandbox", "whatsapp"]).default("sandbox").openapi({ description: "`sandbox` (built in) or `whatsapp` (the WhatsApp Business Cloud API)." }),
    whatsapp: WhatsappCredentials.optional().openapi({ description: "Required when `network` is `whatsapp`." }),
    sendRatePerMinute: z
      .number()
      .int()
      .min(1)
      .max(6000)
      .nullable()
      .optional()
      .openapi({ description: "Pace of bulk sends through this session (messages per minute, with jitter). Default: unpaced for sandbox, 60 for whatsapp. `null` = unpaced." }),
    limits: SendLimitsBody.optional(),
    sandbox: z
      .strictObject({
        businessAccountId: z.string().regex(PHONE_NUMBER_ID, "digits only").optional().openapi({ description: "The business portfolio this sandbox session plays: sessions of the account with the same one share one messaging-limit window, as WhatsApp numbers of one portfolio do.", example: "102290129340398" }),
      })
      .optional()
      .openapi({ description: "sandbox only." }),
  })
  .superRefine((v, ctx) => {
    const tier = v.limits?.messagingLimit;
    if (v.network === "whatsapp" && typeof tier === "number" && !(MESSAGING_TIERS as readonly number[]).includes(tier)) {
      ctx.addIssue({ code: "custom", path: ["limits", "messagingLimit"], message: `one of ${MESSAGING_TIERS.join(", ")} or "unlimited" for whatsapp` });
    }
    if (v.network === "whatsapp" && !v.whatsapp) ctx.addIssue({ code: "custom", path: ["whatsapp"], message: "required when network is whatsapp" });
    if (v.network === "sandbox" && v.whatsapp) ctx.addIssue({ code: "custom", path: ["whatsapp"], message: "only for network whatsapp" });
    if (v.network !== "sandbox" && v.sandbox) ctx.addIssue({ code: "custom", path: ["sandbox"], message: "only for network sandbox" });
  })
  .openapi("CreateSession");

export const UpdateSessionBody = z
  .strictObject({
    limits: SendLimitsBody.openapi({ description: "The fields given replace the session's; the others stay. whatsapp: the messaging limit moves up one tier at a time (as Meta raises it) and may move down to any tier." }),
  })
  .openapi("UpdateSession");
export type UpdateSessionBody = z.infer<typeof UpdateSessionBody>;

/** What a sandbox session can be made to hear from its network about its standing (as Meta's `account_update`). */
export const SandboxHealthBody = z
  .strictObject({
    state: z.enum(["ok", "restricted", "ban_scheduled", "banned", "violation"]),
    restrictions: z.array(z.strictObject({ type: z.string().min(1).max(128), expiresAt: z.iso.datetime().nullable() })).max(20).optional(),
    violation: z.string().min(1).max(128).optional(),
    banDate: z.iso.datetime().optional(),
  })
  .openapi("SandboxHealth", { description: "The standing to simulate; `restrictions` for `restricted`, `violation` for `violation`, `banDate` for `ban_scheduled`." });
export type SandboxHealthBody = z.infer<typeof SandboxHealthBody>;

/** The business account's standing as the network reports it (WhatsApp's `account_update` webhook). */
export const SessionHealth = z
  .object({
    state: z.enum(["ok", "restricted", "ban_scheduled", "banned", "violation"]).openapi({ description: "`ok` once reinstated or unrestricted; `restricted`: some messaging is limited until `restrictions[].expiresAt`; `ban_scheduled` / `banned`: the account is (to be) disabled; `violation`: a policy violation was recorded." }),
    event: z.string().max(64).openapi({ description: "The network's event name.", example: "ACCOUNT_RESTRICTION" }),
    restrictions: z.array(z.object({ type: z.string().max(128), expiresAt: z.string().max(64).nullable() })).max(20).optional(),
    violation: z.string().max(128).optional(),
    banDate: z.string().max(64).optional(),
    at: z.string().openapi({ description: "When it was reported (ISO 8601)." }),
  })
  .openapi("SessionHealth");
export type SessionHealth = z.infer<typeof SessionHealth>;

export const Session = z
  .object({
    id: z.string().openapi({ example: "ses_0m3x9k2a1b2c3d4e5f6g7h8" }),
    name: z.string(),
    network: z.enum(["sandbox", "whatsapp"]),
    status: z.enum(SESSION_STATUSES),
    statusReason: z.string().nullable().openapi({ description: "Why the session is FAILED or STOPPED (e.g. `invalid_token`)." }),
    phoneNumber: z.string().nullable().openapi({ description: "E.164", example: "+15550100234" }),
    me: z.object({ chatId: z.string() }).nullable(),
    credentials: z
      .object({ set: z.boolean(), phoneNumberId: z.string().optional() })
      .openapi({ description: "Whether network credentials are stored. Secrets are never returned." }),
    webhookPath: z.string().nullable().openapi({ description: "whatsapp: the path to give Meta as the webhook callback URL (GET verification, POST events)." }),
    sendRatePerMinute: z.number().int().nullable(),
    limits: z
      .object({
        throughputPerSecond: z.number().int().nullable(),
        pairIntervalMs: z.number().int().nullable(),
        pairBurst: z.number().int().nullable(),
        messagingLimit: z.union([z.number().int(), z.literal("unlimited")]),
      })
      .openapi("SessionLimits", { description: "The sending limits the session applies (its own over its network's defaults); null: no limit of that kind." }),
    health: SessionHealth.nullable().openapi({ description: "whatsapp: the business account's standing as Meta last reported it (restrictions, bans, violations); null until Meta reports one." }),
    ...Timestamps,
  })
  .openapi("Session");
export type Session = z.infer<typeof Session>;

export const SessionIdParam = idParam("ses_0m3x9k2a1b2c3d4e5f6g7h8");

const From = z.string().min(1).max(64).openapi({ example: "15550001111@c.us" });

/** What a sandbox session can be made to receive: every inbound type (media by base64 or URL). */
export const SandboxInboundBody = z
  .union([
    z.strictObject({ from: From, text: z.string().min(1).max(4096) }),
    z.strictObject({ from: From, location: Location }),
    z.strictObject({ from: From, contacts: Contacts }),
    z.strictObject({ from: From, interactive: InteractiveReply }),
    z.strictObject({ from: From, button: ButtonReply }),
    z.strictObject({ from: From, reaction: z.strictObject({ messageId: z.string().min(1).max(64).openapi({ description: "Id of a message of this chat." }), emoji: z.string().max(32) }) }),
    z.strictObject({ from: From, order: Order }),
    z.strictObject({
      from: From,
      unsupported: z.strictObject({
        originalType: z.string().min(1).max(64),
        raw: boundedJson(z.record(z.string(), z.unknown()), MAX_UNSUPPORTED_RAW, 8).optional(),
      }),
    }),
    z.strictObject({
      from: From,
      ...MediaItemFields,
      voice: z.boolean().optional(),
      animated: z.boolean().optional(),
    }),
  ])
  .openapi("SandboxInbound", { description: "`from` and exactly one of `text`, `location`, `contacts`, `interactive` (a reply), `button`, `reaction`, `order`, `unsupported`, or `type` + `media`." });
export type SandboxInboundBody = z.infer<typeof SandboxInboundBody>;
