/**
 * The webhook half of the reference document, made usable, and what it leaves out.
 *
 * The document was assembled from several, and the webhook part's names collided with the send
 * part's: its schemas were renamed (`TextMessage_2`, `BaseMessageProperties_1`, ...) but the
 * references inside it were not, so `IncomingMessage` points at the *send* `TextMessage` (which
 * requires `to` and `recipient_type`) and no real webhook validates. repairWebhookRefs points each
 * reference of the webhook part (the schemas from `WebhookPayload` on, in document order) at the
 * webhook part's own renamed schema; it throws if the document changes so that this is ambiguous.
 *
 * WEBHOOK_SUPPLEMENT covers what the document does not describe, written from Meta's webhook
 * reference (test/reference/README.md says which pages): business-scoped user ids, edits, revokes,
 * the BSUID system message, and the fields other than `messages` a subscribed app receives. A
 * `messages` change must satisfy either the document's own `Change` or the supplement's.
 */
type Json = Record<string, unknown>;

export function repairWebhookRefs(schemas: Record<string, unknown>): Record<string, unknown> {
  const names = Object.keys(schemas);
  const start = names.indexOf("WebhookPayload");
  if (start < 0) throw new Error("the reference document has no WebhookPayload schema");
  const section = new Set(names.slice(start));
  const fix = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(fix);
    if (!node || typeof node !== "object") return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node as Json)) {
      if (k !== "$ref" || typeof v !== "string") {
        out[k] = fix(v);
        continue;
      }
      const name = v.split("/").pop()!;
      if (section.has(name)) {
        out[k] = v;
        continue;
      }
      const own = [...section].filter((s) => s.startsWith(`${name}_`) && /^\d+$/.test(s.slice(name.length + 1)));
      if (own.length !== 1) throw new Error(`webhook schema reference ${name}: ${own.length} candidates in the webhook part`);
      out[k] = v.replace(/[^/]+$/, own[0]!);
    }
    return out;
  };
  const repaired: Record<string, unknown> = { ...schemas };
  for (const name of section) repaired[name] = fix(schemas[name]);
  return repaired;
}

const doc = (name: string) => ({ $ref: `graph#/components/schemas/${name}` });
const str = { type: "string" };
const digits = { type: "string", pattern: "^[0-9]{1,20}$" };
/** A business-scoped user id: country code, optional ENT (parent id), an alphanumeric id. */
const bsuid = { type: "string", pattern: "^[A-Z]{2}\\.(ENT\\.)?[A-Za-z0-9]{1,128}$" };
const head = (required: string[], properties: Json, extra: Json = {}) => ({ type: "object", required: ["messaging_product", "metadata", ...required], properties: { messaging_product: { const: "whatsapp" }, metadata: doc("Metadata"), ...properties }, ...extra });
const DOC_KINDS = ["text", "reaction", "audio", "document", "image", "sticker", "video", "location", "contacts", "unsupported", "button", "interactive", "order"];

const defs: Record<string, Json> = {
  Payload: { type: "object", required: ["object", "entry"], properties: { object: { const: "whatsapp_business_account" }, entry: { type: "array", minItems: 1, items: { $ref: "#/$defs/Entry" } } } },
  Entry: { type: "object", required: ["id", "changes"], properties: { id: digits, time: { type: "integer" }, changes: { type: "array", minItems: 1, items: { $ref: "#/$defs/Change" } } } },
  Change: {
    type: "object",
    required: ["field", "value"],
    oneOf: [
      { properties: { field: { const: "messages" } }, anyOf: [doc("Change"), { properties: { value: { $ref: "#/$defs/MessagesValue" } } }] },
      { properties: { field: { enum: ["group_lifecycle_update", "group_settings_update", "group_participant_update"] } }, allOf: [doc("Change")] },
      { properties: { field: { const: "user_preferences" }, value: { $ref: "#/$defs/UserPreferencesValue" } } },
      { properties: { field: { const: "account_update" }, value: { $ref: "#/$defs/AccountUpdateValue" } } },
      { properties: { field: { const: "message_template_status_update" }, value: { $ref: "#/$defs/TemplateStatusValue" } } },
      { properties: { field: { const: "message_template_quality_update" }, value: { $ref: "#/$defs/TemplateQualityValue" } } },
      { properties: { field: { const: "template_category_update" }, value: { $ref: "#/$defs/TemplateCategoryValue" } } },
      { properties: { field: { const: "smb_message_echoes" }, value: { $ref: "#/$defs/EchoesValue" } } },
      { properties: { field: { const: "calls" }, value: { $ref: "#/$defs/CallsValue" } } },
    ],
  },
  Contact: {
    type: "object",
    properties: { profile: { type: "object", properties: { name: str, username: str } }, wa_id: digits, user_id: bsuid, parent_user_id: bsuid },
    anyOf: [{ required: ["wa_id"] }, { required: ["user_id"] }],
  },
  MessagesValue: head([], {
    contacts: { type: "array", items: { $ref: "#/$defs/Contact" } },
    messages: { type: "array", minItems: 1, items: { $ref: "#/$defs/Message" } },
    statuses: { type: "array", minItems: 1, items: { $ref: "#/$defs/Status" } },
  }, { anyOf: [{ required: ["messages"] }, { required: ["statuses"] }] }),
  Message: {
    type: "object",
    required: ["id", "timestamp", "type"],
    properties: { from: digits, from_user_id: bsuid, from_parent_user_id: bsuid, id: str, timestamp: digits, type: str },
    anyOf: [{ required: ["from"] }, { required: ["from_user_id"] }],
    oneOf: [
      // A kind the document describes: with a phone number, as the document says; a BSUID alone carries the same content object.
      { properties: { type: { enum: DOC_KINDS } }, if: { required: ["from"] }, then: doc("IncomingMessage"), else: { anyOf: DOC_KINDS.map((k) => ({ properties: { type: { const: k } }, required: [k] })) } },
      { properties: { type: { const: "edit" }, edit: { $ref: "#/$defs/Edit" } }, required: ["edit"] },
      { properties: { type: { const: "revoke" }, revoke: { type: "object", required: ["original_message_id"], properties: { original_message_id: str } } }, required: ["revoke"] },
      {
        properties: {
          type: { const: "system" },
          system: { type: "object", required: ["type", "body"], properties: { type: { enum: ["user_changed_number", "user_changed_user_id"] }, body: str, wa_id: digits, user_id: bsuid, parent_user_id: bsuid } },
        },
        required: ["system"],
      },
    ],
  },
  Edit: {
    type: "object",
    required: ["original_message_id", "message"],
    properties: {
      original_message_id: str,
      message: {
        type: "object",
        required: ["type"],
        properties: { type: { enum: ["text", "image", "video", "document"] }, text: { type: "object", required: ["body"], properties: { body: str } }, image: { type: "object" }, video: { type: "object" }, document: { type: "object" } },
      },
    },
  },
  Status: {
    anyOf: [
      doc("Statuses"),
      // With the phone number withheld, only the BSUID names the recipient.
      { type: "object", required: ["id", "status", "timestamp", "recipient_user_id"], properties: { id: str, status: { enum: ["sent", "delivered", "read", "failed"] }, timestamp: digits, recipient_user_id: bsuid, pricing: doc("Pricing"), errors: { type: "array", items: doc("StatusError") } } },
    ],
  },
  UserPreferencesValue: head(["user_preferences"], {
    contacts: { type: "array", items: { $ref: "#/$defs/Contact" } },
    user_preferences: {
      type: "array",
      minItems: 1,
      items: { type: "object", required: ["category", "value", "timestamp"], properties: { wa_id: digits, user_id: bsuid, detail: str, category: { const: "marketing_messages" }, value: { enum: ["stop", "resume"] }, timestamp: { type: "integer" } }, anyOf: [{ required: ["wa_id"] }, { required: ["user_id"] }] },
    },
  }),
  AccountUpdateValue: {
    type: "object",
    required: ["event"],
    properties: {
      event: { type: "string", pattern: "^[A-Z_]{1,64}$" },
      phone_number: digits,
      ban_info: { type: "object", required: ["waba_ban_state"], properties: { waba_ban_state: { enum: ["SCHEDULE_FOR_DISABLE", "DISABLE", "REINSTATE"] }, waba_ban_date: str } },
      restriction_info: { type: "array", items: { type: "object", required: ["restriction_type"], properties: { restriction_type: str, expiration: str } } },
      violation_info: { type: "object", required: ["violation_type"], properties: { violation_type: str } },
    },
  },
  TemplateStatusValue: {
    type: "object",
    required: ["event", "message_template_id", "message_template_name", "message_template_language"],
    properties: {
      event: { enum: ["APPROVED", "REJECTED", "PENDING", "DISABLED", "PAUSED", "FLAGGED", "IN_APPEAL", "PENDING_DELETION", "DELETED", "ARCHIVED", "UNARCHIVED", "REINSTATED", "LOCKED", "UNLOCKED", "LIMIT_EXCEEDED"] },
      message_template_id: { type: "integer" },
      message_template_name: str,
      message_template_language: str,
      message_template_category: str,
      reason: { type: ["string", "null"] },
      disable_info: { type: "object", properties: { disable_date: { type: ["string", "integer"] } } },
      other_info: { type: "object", properties: { title: str, description: str } },
    },
  },
  TemplateQualityValue: {
    type: "object",
    required: ["previous_quality_score", "new_quality_score", "message_template_id", "message_template_name", "message_template_language"],
    properties: { previous_quality_score: { enum: ["GREEN", "YELLOW", "RED", "UNKNOWN"] }, new_quality_score: { enum: ["GREEN", "YELLOW", "RED", "UNKNOWN"] }, message_template_id: { type: "integer" }, message_template_name: str, message_template_language: str },
  },
  TemplateCategoryValue: {
    type: "object",
    required: ["message_template_id", "message_template_name", "message_template_language"],
    properties: { message_template_id: { type: "integer" }, message_template_name: str, message_template_language: str, previous_category: str, new_category: str, correct_category: str },
  },
  EchoesValue: head(["message_echoes"], {
    message_echoes: { type: "array", minItems: 1, items: { type: "object", required: ["from", "id", "timestamp", "type"], properties: { from: digits, to: digits, to_user_id: bsuid, id: str, timestamp: digits, type: str }, anyOf: [{ required: ["to"] }, { required: ["to_user_id"] }] } },
  }),
  CallsValue: head(["calls"], {
    contacts: { type: "array", items: { $ref: "#/$defs/Contact" } },
    calls: {
      type: "array",
      minItems: 1,
      items: { type: "object", required: ["id", "event", "timestamp"], properties: { id: str, from: digits, to: digits, event: { enum: ["connect", "terminate"] }, direction: { enum: ["USER_INITIATED", "BUSINESS_INITIATED"] }, timestamp: digits, status: str, start_time: digits, end_time: digits, duration: { type: "integer" } } },
    },
  }),
};

export const WEBHOOK_SUPPLEMENT = { $id: "supplement", $defs: defs };
