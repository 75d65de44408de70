import { z } from "@hono/zod-openapi";
import { idParam } from "../../platform/openapi.ts";

export const SESSION_STATUSES = ["STARTING", "WORKING", "FAILED", "STOPPED"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export type Network = "sandbox" | "whatsapp";

export const PHONE_NUMBER_ID = /^[0-9]{1,30}$/;

export const WhatsappCredentials = z
  .strictObject({
    phoneNumberId: z.string().regex(PHONE_NUMBER_ID, "digits only").openapi({ example: "106540352242922" }),
    accessToken: z.string().min(1).max(2048).openapi({ description: "A system user access token with `whatsapp_business_messaging`. Never shown again." }),
    appSecret: z.string().min(1).max(256).openapi({ description: "The Meta app secret: verifies `X-Hub-Signature-256` of inbound webhooks. Never shown again." }),
    verifyToken: z.string().min(1).max(256).openapi({ description: "Your verify token for Meta's webhook subscription (`hub.verify_token`). Never shown again." }),
  })
  .openapi("WhatsappCredentials");
export type WhatsappCredentials = z.infer<typeof WhatsappCredentials>;

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
  })
  .superRefine((v, ctx) => {
    if (v.network === "whatsapp" && !v.whatsapp) ctx.addIssue({ code: "custom", path: ["whatsapp"], message: "required when network is whatsapp" });
    if (v.network === "sandbox" && v.whatsapp) ctx.addIssue({ code: "custom", path: ["whatsapp"], message: "only for network whatsapp" });
  })
  .openapi("CreateSession");

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
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Session");
export type Session = z.infer<typeof Session>;

export const SessionIdParam = idParam("ses_0m3x9k2a1b2c3d4e5f6g7h8");

export const SandboxInboundBody = z
  .strictObject({
    from: z.string().min(1).max(64).openapi({ example: "15550001111@c.us" }),
    text: z.string().min(1).max(4096),
  })
  .openapi("SandboxInbound");
