import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BASE64 as COMPILE_BASE64, CompileFile } from "../../src/compile/schemas.ts";
import { pathIssue } from "../../container/src/names.ts";
import { parseRetryAfter } from "../../src/events/config.ts";
import { CampaignMessage } from "../../src/messaging/campaigns/schemas.ts";
import { parseTemplate, renderTemplate, TemplateError } from "../../src/messaging/campaigns/template.ts";
import { parseAddress } from "../../src/messaging/chat-id.ts";
import { EXPIRY, MEDIA_ID } from "../../src/messaging/media/store.ts";
import { BASE64 as MEDIA_BASE64 } from "../../src/messaging/messages/service.ts";
import { PHONE_NUMBER_ID } from "../../src/messaging/sessions/schemas.ts";
import { BEARER } from "../../src/platform/auth.ts";
import { KEY_PATTERN as IDEMPOTENCY_KEY } from "../../src/platform/idempotency.ts";
import { looksLikeApiKey } from "../../src/platform/key-format.ts";
import { bodyLimitFor } from "../../src/platform/limits.ts";
import { patternToRegExp } from "../../src/platform/not-found.ts";
import { decodeCursor, IdCursor } from "../../src/platform/pagination.ts";
import { SAFE_REQUEST_ID } from "../../src/platform/request-context.ts";

/**
 * Every parser and pattern that sees client text, fed 4 KiB of input built to make a backtracking
 * engine work hard: long runs of the characters each pattern hesitates over, with a tail that makes
 * the match fail at the very end. A linear scan handles each in well under a millisecond; the bound
 * of 10 ms (best of three runs, so a GC pause or a busy core does not count) only catches
 * super-linear work.
 */
const SIZE = 4096;
const BOUND_MS = 10;
const SEED = 20261122;

function bestOfThree(fn: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    try {
      fn();
    } catch {
      /* rejection is a fine answer; only the time matters */
    }
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

/**
 * 4 KiB strings from an alphabet, and "opener + pumped run + failing tail" shapes of the same size
 * (the classic worst case of a backtracking engine: `{{` then thousands of spaces and no `}}`).
 */
function hostile(alphabet: string[], pumps: string[], openers: string[]): fc.Arbitrary<string> {
  const unit = fc.constantFrom(...alphabet);
  const random = fc.string({ unit, minLength: SIZE, maxLength: SIZE });
  const pumped = fc
    .tuple(fc.constantFrom("", ...openers), fc.string({ unit, maxLength: 4 }), fc.constantFrom(...pumps), fc.string({ unit, maxLength: 8 }))
    .map(([opener, prefix, pump, suffix]) => {
      const head = opener + prefix;
      const room = SIZE - head.length - suffix.length;
      return head + pump.repeat(Math.max(1, Math.floor(room / pump.length))) + suffix;
    });
  return fc.oneof(random, pumped);
}

interface Target {
  name: string;
  run: (input: string) => unknown;
  alphabet: string[];
  pumps: string[];
  /** What a match must start with, so the pumped run is where the engine hesitates. */
  openers?: string[];
}

const TARGETS: Target[] = [
  { name: "campaign template parser", run: parseTemplate, alphabet: ["{", "}", "|", " ", "\t", "a", ".", "n"], pumps: [" ", "{{", "{{ ", "{{a|", "{{ name ", "{", "}", "| ", "{{name}", " a", "a "], openers: ["{{", "{{ ", "{{name", "{{a|", "{{ name |"] },
  {
    name: "campaign template render",
    run: (t) => renderTemplate(t, { name: null, phone: "+15550001111", attributes: {} }),
    alphabet: [" ", ",", "{", "}", "a"],
    pumps: [" ", " ,", "{{name}} ", "  ."],
  },
  { name: "campaign message schema", run: (t) => CampaignMessage.safeParse({ text: t }), alphabet: ["{", "}", "|", " ", "a"], pumps: [" ", "{{ ", "{{a|", " a"], openers: ["{{", "{{a|"] },
  { name: "chat id / phone parser", run: parseAddress, alphabet: ["1", "0", "+", "@", " ", "c", ".", "u", "s"], pumps: ["1", "@", " ", "1@c.us", "+1"], openers: ["+", "1"] },
  { name: "API key format", run: looksLikeApiKey, alphabet: ["t", "m", "k", "_", "a", "-", "!"], pumps: ["a", "tmk_", "_-"] },
  { name: "Authorization header", run: (h) => BEARER.test(h), alphabet: ["B", "e", "a", "r", " ", "\t", "x", "!"], pumps: [" ", "x ", "Bearer ", " \t", "x"], openers: ["Bearer ", "Bearer x"] },
  { name: "Idempotency-Key", run: (k) => IDEMPOTENCY_KEY.test(k), alphabet: ["a", " ", "~", "\u00e9"], pumps: ["a", "~ "] },
  { name: "X-Request-Id", run: (k) => SAFE_REQUEST_ID.test(k), alphabet: ["a", ".", ":", "-", " "], pumps: ["a", ".:"] },
  { name: "media id and expiry", run: (k) => MEDIA_ID.test(k) || EXPIRY.test(k), alphabet: ["m", "e", "d", "_", "1", "a"], pumps: ["1", "med_", "a1"] },
  { name: "media base64", run: (d) => MEDIA_BASE64.test(d.replace(/\s+/g, "")), alphabet: ["A", "+", "/", "=", " ", "\n", "!"], pumps: ["A", "AA=", " \n", "A "] },
  { name: "compile base64", run: (d) => COMPILE_BASE64.test(d.replace(/\s+/g, "")), alphabet: ["A", "+", "/", "=", " ", "!"], pumps: ["A", "AAAA", "AA==", "AAA"], openers: ["AAAA"] },
  { name: "compile file path", run: (p) => pathIssue(p) ?? CompileFile.safeParse({ path: p, content: "" }), alphabet: ["a", ".", "/", "_", "-", "+", " ", "\u00e9"], pumps: ["a/", "a.", "/", "._"] },
  { name: "WhatsApp phone number id", run: (p) => PHONE_NUMBER_ID.test(p), alphabet: ["1", "a"], pumps: ["1"] },
  { name: "Retry-After", run: (v) => parseRetryAfter(v, 0), alphabet: ["1", " ", "a", ",", ":"], pumps: ["1", " 1", "1 "] },
  { name: "route body limits", run: bodyLimitFor, alphabet: ["/", "a", "p", "i"], pumps: ["/api", "/"] },
  {
    name: "unknown-route matcher",
    run: (p) => [patternToRegExp("/api/sessions/:id/messages/:mid"), patternToRegExp("/hooks/*")].map((re) => re.test(p)),
    alphabet: ["/", "a", ":", "h"],
    pumps: ["a/", "/", "/hooks/a"],
  },
  { name: "list cursor", run: (c) => decodeCursor(c, IdCursor), alphabet: ["e", "y", "J", "=", "-", "_", "A"], pumps: ["eyJ", "A", "=="] },
];

describe("parsers of client text run in linear time (4 KiB of hostile input each)", () => {
  for (const target of TARGETS) {
    it(target.name, () => {
      fc.assert(
        fc.property(hostile(target.alphabet, target.pumps, target.openers ?? []), (input) => {
          expect(input.length).toBeLessThanOrEqual(SIZE);
          expect(bestOfThree(() => target.run(input))).toBeLessThan(BOUND_MS);
        }),
        { seed: SEED, numRuns: 40 },
      );
    });
  }

  it("the text of the reported case (`{{` + 4,094 spaces) is answered at once", () => {
    const text = `{{${" ".repeat(4094)}`;
    expect(bestOfThree(() => CampaignMessage.safeParse({ text }))).toBeLessThan(BOUND_MS);
    expect(parseTemplate(text)).toEqual([{ kind: "text", value: text }]);
  });
});

/** The former pattern, as the specification of what the scanner accepts (only ever run on short text). */
const REFERENCE = /\{\{\s*([^{}|]*?)\s*(?:\|([^{}]*))?\}\}/g;

function referenceParse(text: string): unknown[] | string {
  const parts: unknown[] = [];
  let last = 0;
  for (const m of text.matchAll(REFERENCE)) {
    if (m.index > last) parts.push({ kind: "text", value: text.slice(last, m.index) });
    const name = m[1]!;
    const path = name.split(".");
    const valid = (path.length === 1 && ["name", "phone", "email"].includes(path[0]!)) || (path.length === 2 && path[0] === "attributes" && /^[A-Za-z0-9_-]{1,64}$/.test(path[1]!));
    if (!valid) return `invalid:${name}`;
    parts.push({ kind: "var", path, fallback: m[2] !== undefined ? m[2].trim() : null, raw: m[0] });
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push({ kind: "text", value: text.slice(last) });
  return parts;
}

describe("the linear template scanner", () => {
  it("finds exactly what the former regular expression found", () => {
    const pieces = fc.constantFrom("{", "}", "{{", "}}", "|", " ", "\n", "name", "phone", "email", "attributes.", "city", ".", "x", "there");
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 24 }), (chunks) => {
        const text = chunks.join("");
        let ours: unknown[] | string;
        try {
          ours = parseTemplate(text);
        } catch (err) {
          if (!(err instanceof TemplateError)) throw err;
          ours = `invalid:${err.variable}`;
        }
        expect(ours).toEqual(referenceParse(text));
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });
});
