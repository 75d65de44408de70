import { isFileType } from "../message-types.ts";
import { ButtonReply, Contacts, InteractiveReply, Location, MAX_UNSUPPORTED_RAW, Order, Reaction, Unsupported, type Content } from "../messages/content.ts";
import type { InboundFromNetwork, InboundMedia } from "./driver.ts";

/**
 * The Cloud API's inbound message objects (`IncomingMessage` of the reference document) as our
 * typed bodies. Every object with an id, a sender and a type becomes a message: a type we do not
 * know, or a known one whose body does not have its required fields, is kept as `unsupported` with
 * the raw object (when small enough), so nothing a customer sends is lost.
 */

type Raw = Record<string, unknown>;
type Body = Pick<InboundFromNetwork, "type" | "text" | "media" | "content" | "reactionToExternalId">;

const obj = (v: unknown): Raw => (v && typeof v === "object" && !Array.isArray(v) ? (v as Raw) : {});
const arr = (v: unknown, max: number): unknown[] => (Array.isArray(v) ? v.slice(0, max) : []);
/** A string field cut to `max` characters; absent when not a string. */
const str = (v: unknown, max: number): string | undefined => (typeof v === "string" ? v.slice(0, max) : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : undefined);
const label = (v: unknown): "HOME" | "WORK" | undefined => {
  const u = typeof v === "string" ? v.toUpperCase() : "";
  return u === "HOME" || u === "WORK" ? u : undefined;
};

/** Drops undefined members, so optional fields are absent rather than `undefined` in stored JSON. */
function compact<T extends Raw>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

function media(type: string, m: Raw): InboundMedia {
  return compact({
    mimetype: str(m.mime_type, 127) ?? null,
    filename: str(m.filename, 255) ?? null,
    caption: str(m.caption, 1024) ?? null,
    networkMediaId: str(m.id, 128) ?? null,
    sha256: str(m.sha256, 128) ?? null,
    voice: type === "audio" ? m.voice === true : undefined,
    animated: type === "sticker" ? m.animated === true : undefined,
  });
}

function contactCard(c: Raw) {
  const name = obj(c.name);
  const org = obj(c.org);
  const phones = arr(c.phones, 20).map((p) => compact({ phone: str(obj(p).phone, 64) ?? "", waId: str(obj(p).wa_id, 32), type: label(obj(p).type) }));
  return compact({
    name: compact({
      formattedName: str(name.formatted_name, 512) || [str(name.first_name, 256), str(name.last_name, 256)].filter(Boolean).join(" ") || phones[0]?.phone || "?",
      firstName: str(name.first_name, 256),
      lastName: str(name.last_name, 256),
      middleName: str(name.middle_name, 256),
      prefix: str(name.prefix, 64),
      suffix: str(name.suffix, 64),
    }),
    phones: phones.filter((p) => p.phone),
    emails: arr(c.emails, 20)
      .map((e) => compact({ email: str(obj(e).email, 320) ?? "", type: label(obj(e).type) }))
      .filter((e) => e.email.length >= 3),
    urls: arr(c.urls, 20)
      .map((u) => compact({ url: str(obj(u).url, 2048) ?? "", type: label(obj(u).type) }))
      .filter((u) => u.url),
    org: Object.keys(org).length ? compact({ company: str(org.company, 256), department: str(org.department, 256), title: str(org.title, 256) }) : undefined,
    birthday: typeof c.birthday === "string" && /^\d{4}-\d{2}-\d{2}$/.test(c.birthday) ? c.birthday : undefined,
  });
}

/** The typed body of one known type, or null when the object lacks what the type requires. */
function known(type: string, raw: Raw): Body | null {
  const body = obj(raw[type]);
  if (type === "text") return typeof body.body === "string" ? { type, text: body.body.slice(0, 65_536) } : null;
  if (isFileType(type)) return { type, media: media(type, body) };
  let content: Content;
  let reactionTo: string | undefined;
  if (type === "location") {
    const loc = Location.safeParse(compact({ latitude: num(body.latitude), longitude: num(body.longitude), name: str(body.name, 1000), address: str(body.address, 1000), url: str(body.url, 2048) }));
    if (!loc.success) return null;
    content = { location: loc.data };
  } else if (type === "contacts") {
    const cards = Contacts.safeParse(arr(raw.contacts, 20).map((c) => contactCard(obj(c))));
    if (!cards.success) return null;
    content = { contacts: cards.data };
  } else if (type === "interactive") {
    const kind = body.type;
    if (kind !== "button_reply" && kind !== "list_reply") return null;
    const reply = obj(body[kind]);
    const parsed = InteractiveReply.safeParse(compact({ type: kind, id: str(reply.id, 256), title: str(reply.title, 256), description: str(reply.description, 256) }));
    if (!parsed.success) return null;
    content = { interactive: parsed.data };
  } else if (type === "button") {
    const parsed = ButtonReply.safeParse({ payload: str(body.payload, 1024) ?? "", text: str(body.text, 1024) ?? "" });
    if (!parsed.success) return null;
    content = { button: parsed.data };
  } else if (type === "reaction") {
    reactionTo = str(body.message_id, 256);
    const parsed = Reaction.safeParse({ messageId: null, emoji: typeof body.emoji === "string" ? body.emoji : "" });
    if (!reactionTo || !parsed.success) return null;
    content = { reaction: parsed.data };
  } else if (type === "order") {
    const parsed = Order.safeParse({
      catalogId: str(body.catalog_id, 64) ?? "",
      text: str(body.text, 4096) ?? "",
      items: arr(body.product_items, 100).map((i) => ({ productRetailerId: str(obj(i).product_retailer_id, 256) ?? "", quantity: num(obj(i).quantity), itemPrice: num(obj(i).item_price), currency: str(obj(i).currency, 8) ?? "" })),
    });
    if (!parsed.success) return null;
    content = { order: parsed.data };
  } else return null;
  return { type: type as Body["type"], content, ...(reactionTo ? { reactionToExternalId: reactionTo } : {}) };
}

/** A message of a type we do not know (or a malformed one): kept whole when small. */
export function unsupported(originalType: string, raw: Raw): Body {
  const json = JSON.stringify(raw);
  const errors = arr(raw.errors, 5).map((e) => ({ code: Math.trunc(num(obj(e).code) ?? 0), title: str(obj(e).title, 256) ?? "" }));
  const parsed = Unsupported.parse({ originalType: originalType.slice(0, 64), ...(errors.length ? { errors } : {}), raw: json.length <= MAX_UNSUPPORTED_RAW ? raw : null });
  return { type: "unsupported", content: { unsupported: parsed } };
}

/** The body of one inbound message object (never null: unknown or malformed becomes `unsupported`). */
export function inboundBody(type: string, raw: Raw): Body {
  return (type === "unsupported" || type === "unknown" ? null : known(type, raw)) ?? unsupported(type, raw);
}
