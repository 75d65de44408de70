/**
 * Campaign text personalisation: `{{name}}`, `{{phone}}`, `{{email}}`, `{{attributes.key}}`, each with an
 * optional default after `|` (`{{name|there}}`). Templates are parsed once at creation so an unknown
 * variable is a 400 then, not a surprise at send time.
 */
export interface TemplateContact {
  name: string | null;
  /** E.164; null for a person known only by BSUID. */
  phone: string | null;
  email?: string | null;
  attributes: Record<string, unknown>;
}

type Part = { kind: "text"; value: string } | { kind: "var"; path: string[]; fallback: string | null; raw: string };

const TOP_LEVEL = new Set(["name", "phone", "email"]);
const ATTRIBUTE_KEY = /^[A-Za-z0-9_-]{1,64}$/;

export class TemplateError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(message);
    this.variable = variable;
  }
}

/** One `{{...}}` found by `scanVariable`: where it ends and what it holds. */
interface RawVariable {
  end: number;
  name: string;
  fallback: string | null;
}

/**
 * Reads the variable that starts with the `{{` at `start`: `{{ name }}` or `{{ name | default }}`,
 * where the name has no `{`, `}` or `|` and the default no `{` or `}`. Null when there is none there.
 * One forward pass that stops at the first character that cannot belong, so a failed attempt never
 * reads past a `{` (where the next attempt starts): the whole scan stays linear in the text.
 */
function scanVariable(text: string, start: number): RawVariable | null {
  let i = start + 2;
  while (i < text.length && text[i] !== "{" && text[i] !== "}" && text[i] !== "|") i++;
  const name = text.slice(start + 2, i).trim();
  let fallback: string | null = null;
  if (text[i] === "|") {
    const from = i + 1;
    i = from;
    while (i < text.length && text[i] !== "{" && text[i] !== "}") i++;
    fallback = text.slice(from, i).trim();
  }
  if (text[i] !== "}" || text[i + 1] !== "}") return null;
  return { end: i + 2, name, fallback };
}

export function parseTemplate(text: string): Part[] {
  const parts: Part[] = [];
  let last = 0;
  let from = 0;
  for (let at = text.indexOf("{{", from); at >= 0; at = text.indexOf("{{", from)) {
    const found = scanVariable(text, at);
    if (!found) {
      from = at + 1;
      continue;
    }
    if (at > last) parts.push({ kind: "text", value: text.slice(last, at) });
    const { name } = found;
    const path = name.split(".");
    const valid = (path.length === 1 && TOP_LEVEL.has(path[0]!)) || (path.length === 2 && path[0] === "attributes" && ATTRIBUTE_KEY.test(path[1]!));
    if (!valid) {
      throw new TemplateError(name, `Unknown template variable "{{${name}}}". Use {{name}}, {{phone}}, {{email}} or {{attributes.KEY}}, optionally with a default: {{name|there}}.`);
    }
    parts.push({ kind: "var", path, fallback: found.fallback, raw: text.slice(at, found.end) });
    last = from = found.end;
  }
  if (last < text.length) parts.push({ kind: "text", value: text.slice(last) });
  return parts;
}

/** Variables a template uses, e.g. for a preview. */
export function templateVariables(text: string): string[] {
  return parseTemplate(text).flatMap((p) => (p.kind === "var" ? [p.path.join(".")] : []));
}

function valueOf(contact: TemplateContact, path: string[]): string | null {
  if (path[0] === "attributes") {
    const v = contact.attributes[path[1]!];
    if (v === undefined || v === null || v === "") return null;
    return typeof v === "string" ? v : JSON.stringify(v);
  }
  const v = path[0] === "name" ? contact.name : path[0] === "phone" ? contact.phone : (contact.email ?? null);
  return v === null || v === "" ? null : v;
}

/** A missing value without a default renders as empty text (trimmed of the doubled space it leaves). */
export function renderTemplate(text: string, contact: TemplateContact): string {
  let out = "";
  for (const part of parseTemplate(text)) {
    out += part.kind === "text" ? part.value : (valueOf(contact, part.path) ?? part.fallback ?? "");
  }
  return out.replace(/ {2,}/g, " ").replace(/ ([,.!?])/g, "$1").trim();
}
