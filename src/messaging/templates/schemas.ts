import { z } from "@hono/zod-openapi";
import { PaginationQuery } from "../../platform/pagination.ts";
import { Timestamps } from "../schema-fields.ts";

/** A template's components as JSON, at most (they travel in its events). */
export const MAX_TEMPLATE_COMPONENTS_BYTES = 16 * 1024;

export const TEMPLATE_CATEGORIES = ["MARKETING", "UTILITY", "AUTHENTICATION"] as const;

const Str = (max: number) => z.string().max(max);

const Example = z
  .strictObject({
    header_text: z.array(Str(1024)).max(1).optional(),
    header_handle: z.array(Str(4096)).max(1).optional(),
    body_text: z.array(z.array(Str(1024)).max(100)).max(1).optional(),
  })
  .openapi({ description: "Example values of the component's parameters (Meta requires one per parameter)." });

const Button = z.strictObject({
  type: z.enum(["QUICK_REPLY", "URL", "PHONE_NUMBER", "COPY_CODE", "OTP"]),
  text: Str(200).optional(),
  url: Str(4096).optional(),
  phone_number: Str(64).optional(),
  example: z.array(Str(2000)).max(1).optional(),
  otp_type: z.enum(["COPY_CODE", "ONE_TAP", "ZERO_TAP"]).optional(),
});

/** A component of a new template, in Meta's form; the limits Meta sets are checked with a message naming the rule (rules.ts). */
export const TemplateComponentInput = z
  .strictObject({
    type: z.enum(["HEADER", "BODY", "FOOTER", "BUTTONS"]),
    format: z.enum(["TEXT", "IMAGE", "VIDEO", "DOCUMENT", "LOCATION"]).optional(),
    text: Str(4096).optional(),
    example: Example.optional(),
    buttons: z.array(Button).max(20).optional(),
    add_security_recommendation: z.boolean().optional(),
    code_expiration_minutes: z.number().int().min(1).max(90).optional(),
  })
  .openapi("TemplateComponentInput");

export const CreateTemplateBody = z
  .strictObject({
    name: Str(512).min(1).openapi({ description: "Lowercase letters, digits and underscores, at most 512.", example: "order_confirmation" }),
    language: Str(15).min(2).openapi({ example: "en_US" }),
    category: z.enum(TEMPLATE_CATEGORIES),
    components: z
      .array(TemplateComponentInput)
      .min(1)
      .max(10)
      .refine((c) => JSON.stringify(c).length <= MAX_TEMPLATE_COMPONENTS_BYTES, `at most ${MAX_TEMPLATE_COMPONENTS_BYTES / 1024} KiB as JSON`),
    allowCategoryChange: z.boolean().optional().openapi({ description: "Let Meta assign another category instead of rejecting the template." }),
  })
  .openapi("CreateTemplate", {
    description: "One BODY (at most 1024 characters), at most one HEADER (text at most 60) and FOOTER (at most 60), at most one BUTTONS (up to 10; URL at most 2, PHONE_NUMBER 1, COPY_CODE 1; text at most 25). Parameters `{{1}}`, `{{2}}`, ... sequential from 1, each with an example.",
  });
export type CreateTemplateBody = z.infer<typeof CreateTemplateBody>;

export const Template = z
  .object({
    id: z.string().openapi({ example: "tpl_0m3x9k2a1b2c3d4e5f6g7h8" }),
    sessionId: z.string(),
    name: z.string().openapi({ example: "order_confirmation" }),
    language: z.string().openapi({ example: "en_US" }),
    networkId: z.string().nullable().openapi({ description: "The network's id of the template (Meta's hsm id)." }),
    status: z.string().openapi({ description: "As the network reports it: `APPROVED`, `PENDING`, `REJECTED`, `PAUSED`, `DISABLED`, ... Only `APPROVED` templates can be sent.", example: "APPROVED" }),
    category: z.string().openapi({ example: "UTILITY" }),
    components: z.array(z.record(z.string(), z.unknown())).openapi({ description: "The components as the network defines them." }),
    quality: z.string().nullable().openapi({ description: "`GREEN`, `YELLOW`, `RED` or `UNKNOWN`; null until reported.", example: "GREEN" }),
    rejectedReason: z.string().nullable(),
    syncedAt: z.string().openapi({ description: "When the row was last brought in line with the network." }),
    ...Timestamps,
  })
  .openapi("Template");
export type Template = z.infer<typeof Template>;

export const TemplateList = z
  .object({
    data: z.array(Template),
    nextCursor: z.string().nullable().openapi({ description: "Pass as `cursor` for the next page; null on the last page." }),
    syncedAt: z.string().nullable().openapi({ description: "When the session's templates were last brought in line with the network; null: never." }),
  })
  .openapi("TemplateList");

export const TemplateListQuery = PaginationQuery.extend({
  refresh: z.enum(["0", "1", "true", "false"]).optional().openapi({ description: "`1`: sync from the network first (otherwise only when the session has none cached)." }),
});

export const TemplateNameParam = z.object({
  id: z.string().max(64).openapi({ param: { name: "id", in: "path" }, example: "ses_0m3x9k2a1b2c3d4e5f6g7h8" }),
  name: z.string().max(512).openapi({ param: { name: "name", in: "path" }, example: "order_confirmation" }),
});

export const DeleteTemplateQuery = z.object({
  language: Str(15).optional().openapi({ description: "Delete only this language (default: every language of the name)." }),
  hsmId: z.string().regex(/^[0-9]{1,30}$/).optional().openapi({ description: "Delete only the template with this network id." }),
});

export const TemplatesDeleted = z.object({ name: z.string(), deleted: z.number().int() }).openapi("TemplatesDeleted");
