import type { ValidationIssue } from "../../platform/errors.ts";

/**
 * Meta's rules for message templates, pure so the console can use them too: what a new template
 * must satisfy before it is sent to the network, and what a template send must carry for the
 * template it names (one parameter per variable of its header, body and buttons).
 */

export const TEMPLATE_NAME = /^[a-z0-9_]{1,512}$/;
/** A language code (`en`, `fil`) or a language and locale (`en_US`, `zh_HK`). */
export const TEMPLATE_LANGUAGE = /^[a-z]{2,3}(_[A-Z]{2,4})?$/;
export const LIMITS = { headerText: 60, bodyText: 1024, footerText: 60, buttons: 10, buttonText: 25, urlButtons: 2, phoneButtons: 1, copyCodeButtons: 1, url: 2000, phone: 20 } as const;

/** A template component as Meta defines it (the create body and the synced copy). */
export interface TemplateComponent {
  type: string;
  format?: string;
  text?: string;
  example?: { header_text?: string[]; header_handle?: string[]; body_text?: string[][] };
  buttons?: { type: string; text?: string; url?: string; phone_number?: string; example?: string[]; otp_type?: string }[];
  [key: string]: unknown;
}

const VARIABLE = /\{\{\s*([^{}\s]{1,64})\s*\}\}/g;

/** The variables of a text, in order of first appearance (`{{1}}` -> "1", `{{first_name}}` -> "first_name"). */
export function variablesOf(text: string | undefined): string[] {
  if (!text) return [];
  const seen = new Set<string>();
  for (const m of text.matchAll(VARIABLE)) seen.add(m[1]!);
  return [...seen];
}

/** Positional variables must be exactly {{1}} .. {{n}}: answers what is wrong, or null. */
function sequentialProblem(vars: string[]): string | null {
  if (vars.some((v) => !/^[0-9]{1,3}$/.test(v))) return "parameters must be positional: {{1}}, {{2}}, ...";
  const numbers = vars.map(Number).sort((a, b) => a - b);
  for (let i = 0; i < numbers.length; i++) if (numbers[i] !== i + 1) return `parameters must be sequential from {{1}}: found ${numbers.map((n) => `{{${n}}}`).join(", ")}`;
  return null;
}

/** Everything wrong with a template to create, each issue naming its field and the rule. Empty: valid. */
export function createIssues(t: { name: string; language: string; category: string; components: TemplateComponent[] }): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const add = (path: string, message: string) => void issues.push({ path, message });
  if (!TEMPLATE_NAME.test(t.name)) add("name", "must be 1 to 512 characters of lowercase letters, digits and underscores");
  if (!TEMPLATE_LANGUAGE.test(t.language)) add("language", "must be a language code such as en or en_US");
  const auth = t.category === "AUTHENTICATION";
  const count = (type: string) => t.components.filter((c) => c.type === type).length;
  if (count("BODY") !== 1) add("components", `exactly one BODY component is required (found ${count("BODY")})`);
  for (const type of ["HEADER", "FOOTER", "BUTTONS"]) if (count(type) > 1) add("components", `at most one ${type} component is allowed (found ${count(type)})`);
  t.components.forEach((c, i) => {
    const at = `components.${i}`;
    const vars = variablesOf(c.text);
    if (c.type === "HEADER") {
      const format = c.format ?? "TEXT";
      if (format === "TEXT") {
        if (!c.text) add(`${at}.text`, "a TEXT header needs text");
        else if (c.text.length > LIMITS.headerText) add(`${at}.text`, `a header is at most ${LIMITS.headerText} characters (it has ${c.text.length})`);
        if (vars.length > 1) add(`${at}.text`, "a header has at most one parameter");
        else if (vars.length === 1) {
          const problem = sequentialProblem(vars);
          if (problem) add(`${at}.text`, problem);
          if (c.example?.header_text?.length !== 1 || !c.example.header_text[0]) add(`${at}.example.header_text`, "a header parameter needs an example value");
        }
      } else if (format !== "LOCATION" && !c.example?.header_handle?.[0]) add(`${at}.example.header_handle`, `a ${format} header needs an example (the handle of an uploaded sample)`);
    } else if (c.type === "BODY") {
      if (!c.text) {
        if (!auth) add(`${at}.text`, "the body needs text");
      } else if (c.text.length > LIMITS.bodyText) add(`${at}.text`, `the body is at most ${LIMITS.bodyText} characters (it has ${c.text.length})`);
      if (vars.length > 0) {
        const problem = sequentialProblem(vars);
        if (problem) add(`${at}.text`, problem);
        const example = c.example?.body_text?.[0];
        if (!example || example.length !== vars.length || example.some((v) => !v)) add(`${at}.example.body_text`, `the body's ${vars.length} parameter(s) need ${vars.length} example value(s) (example.body_text: [[...]])`);
      }
    } else if (c.type === "FOOTER") {
      if (!c.text && !auth) add(`${at}.text`, "the footer needs text");
      else if (c.text && c.text.length > LIMITS.footerText) add(`${at}.text`, `the footer is at most ${LIMITS.footerText} characters (it has ${c.text.length})`);
      if (vars.length > 0) add(`${at}.text`, "the footer cannot have parameters");
    } else if (c.type === "BUTTONS") {
      const buttons = c.buttons ?? [];
      if (buttons.length === 0 || buttons.length > LIMITS.buttons) add(`${at}.buttons`, `1 to ${LIMITS.buttons} buttons (found ${buttons.length})`);
      const ofType = (type: string) => buttons.filter((b) => b.type === type).length;
      if (ofType("URL") > LIMITS.urlButtons) add(`${at}.buttons`, `at most ${LIMITS.urlButtons} URL buttons`);
      if (ofType("PHONE_NUMBER") > LIMITS.phoneButtons) add(`${at}.buttons`, `at most ${LIMITS.phoneButtons} PHONE_NUMBER button`);
      if (ofType("COPY_CODE") > LIMITS.copyCodeButtons) add(`${at}.buttons`, `at most ${LIMITS.copyCodeButtons} COPY_CODE button`);
      if (auth && buttons.some((b) => b.type !== "OTP")) add(`${at}.buttons`, "an AUTHENTICATION template has only OTP buttons");
      if (!auth && ofType("OTP") > 0) add(`${at}.buttons`, "OTP buttons are only for AUTHENTICATION templates");
      buttons.forEach((b, j) => {
        const bat = `${at}.buttons.${j}`;
        if (b.type !== "OTP" && !b.text) add(`${bat}.text`, "a button needs text");
        else if (b.text && b.text.length > LIMITS.buttonText) add(`${bat}.text`, `a button's text is at most ${LIMITS.buttonText} characters (it has ${b.text.length})`);
        if (b.type === "URL") {
          if (!b.url || !/^https?:\/\//.test(b.url)) add(`${bat}.url`, "a URL button needs an http(s) url");
          else if (b.url.length > LIMITS.url) add(`${bat}.url`, `a url is at most ${LIMITS.url} characters`);
          const uvars = variablesOf(b.url);
          if (uvars.length > 1 || (uvars.length === 1 && (uvars[0] !== "1" || !b.url!.trimEnd().endsWith("}}")))) add(`${bat}.url`, "a URL button has at most one parameter, {{1}}, at the end of its url");
          else if (uvars.length === 1 && !b.example?.[0]) add(`${bat}.example`, "a URL parameter needs an example value");
        }
        if (b.type === "PHONE_NUMBER" && (!b.phone_number || b.phone_number.length > LIMITS.phone)) add(`${bat}.phone_number`, `a PHONE_NUMBER button needs a phone_number of at most ${LIMITS.phone} characters`);
      });
    }
  });
  return issues;
}

/** How many parameters a send of this template needs: header, body, and each button by index. */
export function parameterCounts(components: TemplateComponent[]): { header: number; body: number; buttons: Map<number, number> } {
  const header = components.find((c) => c.type === "HEADER");
  const body = components.find((c) => c.type === "BODY");
  const buttons = new Map<number, number>();
  (components.find((c) => c.type === "BUTTONS")?.buttons ?? []).forEach((b, i) => {
    const n = b.type === "URL" ? variablesOf(b.url).length : b.type === "COPY_CODE" || (b.type === "OTP" && b.otp_type !== "ZERO_TAP") ? 1 : 0;
    if (n > 0) buttons.set(i, n);
  });
  const headerCount = !header ? 0 : (header.format ?? "TEXT") === "TEXT" ? variablesOf(header.text).length : 1;
  return { header: headerCount, body: variablesOf(body?.text).length, buttons };
}

/** What a send carries (`TemplateSpec.components`, the Cloud API's send form), counted the same way. */
function givenCounts(send: Record<string, unknown>[]): { header: number; body: number; buttons: Map<number, number> } {
  const out = { header: 0, body: 0, buttons: new Map<number, number>() };
  for (const c of send) {
    const n = Array.isArray(c.parameters) ? c.parameters.length : 0;
    const type = String(c.type ?? "").toLowerCase();
    if (type === "header") out.header += n;
    else if (type === "body") out.body += n;
    else if (type === "button") {
      const index = Number(c.index);
      out.buttons.set(Number.isInteger(index) ? index : -1, (out.buttons.get(index) ?? 0) + n);
    }
  }
  return out;
}

/** Parameters missing or extra in a send of this template: each issue names the part and the counts. Empty: it fits. */
export function sendIssues(template: TemplateComponent[], send: Record<string, unknown>[] | undefined, path = "template.components"): ValidationIssue[] {
  const need = parameterCounts(template);
  const given = givenCounts(send ?? []);
  const issues: ValidationIssue[] = [];
  const compare = (part: string, n: number, g: number) => {
    if (n > g) issues.push({ path, message: `the template's ${part} needs ${n} parameter(s); ${g} given (missing ${n - g})` });
    else if (g > n) issues.push({ path, message: `the template's ${part} takes ${n} parameter(s); ${g} given (${g - n} extra)` });
  };
  compare("header", need.header, given.header);
  compare("body", need.body, given.body);
  for (const i of new Set([...need.buttons.keys(), ...given.buttons.keys()])) compare(`button ${i}`, need.buttons.get(i) ?? 0, given.buttons.get(i) ?? 0);
  return issues;
}
