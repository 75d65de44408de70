import fc from "fast-check";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, inject } from "vitest";
import { api, createKey, freshIp, type TestKey } from "../helpers.ts";
import { fakePhone } from "../messaging/support.ts";
import { hostileString, malformedBody, SchemaArbitraries, type Hints, type Schema } from "./schema-arbitrary.ts";

/**
 * Every operation of /openapi.json, called with generated path ids, query strings and bodies
 * (valid by the schema, at its bounds, and hostile: huge and repetitive strings, deep nesting,
 * wrong types, odd unicode, prototype-polluting keys, malformed JSON). Each answer must be a
 * 4xx/2xx (never a 5xx), with the JSON error body when it is an error, within 2 s.
 * Fixed seed and bounded runs, so a failure is reproducible and the suite stays under a minute.
 */
const SEED = 20261122;
const RUNS = 16;
const MAX_MS = 2_000;
/** What a small document's compile may add to a sync compile's answer (seconds of TeX, queued). */
const COMPILE_MS = 10_000;
/** The compile server's first read of its installation for GET /v1/compile/environment (2-4 s on a loaded machine). */
const ENVIRONMENT_MS = 10_000;

/**
 * An operation that waits on someone else by contract gets that wait on top: a webhook test waits
 * for the receiver up to WEBHOOK_TIMEOUT_MS.
 */
function maxMsFor(path: string): number {
  if (path === "/api/webhooks/{id}/test") return MAX_MS + Number(env.WEBHOOK_TIMEOUT_MS);
  // a valid body is compiled by real TeX on the suite's one-engine pool: seconds on a loaded machine
  if (path === "/v1/compile/sync") return MAX_MS + COMPILE_MS;
  // the compile server reads its installation (thousands of package files) the first time it is asked
  if (path === "/v1/compile/environment") return MAX_MS + ENVIRONMENT_MS;
  // GET /api/events/poll holds an empty answer for `wait` (hinted to at most 1 s below)
  if (path === "/api/events/poll") return MAX_MS + 1_000;
  return MAX_MS;
}

interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  security?: unknown[];
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

interface Fixture {
  key: TestKey;
  ids: Record<string, string>;
}

/** Real resources, so that generated requests also reach the code behind the 404s. */
async function fixture(): Promise<Fixture> {
  const key = await createKey("enterprise", { limit: 10_000_000 });
  const spare = await createKey("enterprise", { accountId: key.accountId });
  const call = async (path: string, json: unknown): Promise<Record<string, unknown>> => {
    const res = await api(path, { method: "POST", key: key.key, json });
    if (res.status >= 300) throw new Error(`fixture ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const session = await call("/api/sessions", { name: "fuzz" });
  const phone = await fakePhone("fuzz-token");
  const whatsapp = await call("/api/sessions", { name: "fuzz-wa", network: "whatsapp", whatsapp: { phoneNumberId: phone.phoneNumberId, accessToken: phone.token, appSecret: "fuzz-secret", verifyToken: "fuzz-verify" } });
  const contact = await call("/api/contacts", { phone: "+14155550142", name: "Fuzz", tags: ["fuzz"] });
  const webhook = await call("/api/webhooks", { url: `${inject("receiverUrl")}/in/fuzz`, events: ["*"] });
  // Its own webhook for `test` and deliveries, whose URL the generated PUTs do not move (a test waits for the receiver).
  const tested = await call("/api/webhooks", { url: `${inject("receiverUrl")}/in/fuzz-test`, events: ["*"] });
  const campaign = await call("/api/campaigns", { name: "fuzz", sessionId: session.id, message: { text: "Hi {{name}}" }, audience: { tags: ["fuzz"] } });
  const batch = await call("/api/messages/send-bulk", { sessionId: session.id, messages: [{ to: "+14155550142", text: "fuzz" }] });
  const job = await call("/v1/compile/async", { source: "\\documentclass{article}\\begin{document}fuzz\\end{document}" });
  const test = await call(`/api/webhooks/${tested.id}/test`, {});
  return {
    key,
    ids: {
      session: String(session.id),
      whatsapp: String(whatsapp.id),
      contact: String(contact.id),
      webhook: String(webhook.id),
      tested: String(tested.id),
      campaign: String(campaign.id),
      batch: String(batch.batchId),
      job: String(job.id),
      delivery: String(test.deliveryId),
      key: spare.keyId,
      chat: "14155550142@c.us",
    },
  };
}

/** Which real id a path parameter of an operation names. */
function realIdFor(path: string, param: string, ids: Record<string, string>): string | undefined {
  if (param === "deliveryId") return ids.delivery;
  if (/^\/api\/webhooks\/\{id\}\/(test|deliveries)/.test(path)) return ids.tested;
  if (param === "chatId") return ids.chat;
  if (param === "sessionId") return path.startsWith("/hooks/") ? ids.whatsapp : ids.session;
  const table: Array<[RegExp, string]> = [
    [/^\/api\/keys\//, "key"],
    [/^\/v1\/compile\/jobs\//, "job"],
    [/^\/api\/sessions\//, "session"],
    [/^\/api\/messages\/batches\//, "batch"],
    [/^\/api\/contacts\//, "contact"],
    [/^\/api\/campaigns\//, "campaign"],
    [/^\/api\/webhooks\//, "webhook"],
  ];
  const hit = table.find(([re]) => re.test(path));
  return hit ? ids[hit[1]] : undefined;
}

const hostileId: fc.Arbitrary<string> = fc.oneof(
  hostileString.map((s) => s.slice(0, 3_000)),
  fc.constantFrom("ses_0", "cmp_" + "z".repeat(60), "..", ".", "%2e%2e%2f", "a/b", "a%2Fb", "?x=1", "#", "%", "%zz"),
);

/** Cursors of every wrong shape: not base64, not JSON, JSON of the wrong types. */
const hostileCursor: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue().map((v) => btoa(unescape(encodeURIComponent(JSON.stringify(v)))).replace(/=+$/, "")),
  fc.constantFrom("eyJpZCI6e319", "eyJpZCI6W119", "eyJpZCI6bnVsbH0", "e30", "bnVsbA", "W10", "eyJwb3NpdGlvbiI6Ii0xIn0", "eyJpZCI6IngiLCJwb3NpdGlvbiI6MWUzMDh9", "!!!", "===="),
  hostileString,
);

/** Lone surrogates as U+FFFD (a URL cannot carry them; a body can, and does). */
function wellFormed(s: string): string {
  return Array.from(s, (ch) => (ch.length === 1 && ch >= "\ud800" && ch <= "\udfff" ? "\ufffd" : ch)).join("");
}

interface Built {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

function operationArbitrary(doc: Doc, path: string, method: string, op: Operation, fx: Fixture): fc.Arbitrary<Built> {
  const receiver = inject("receiverUrl");
  const hints: Hints = {
    sessionId: fc.constant(fx.ids.session!),
    contactIds: fc.constant([fx.ids.contact!]),
    to: fc.constantFrom("+14155550142", "14155550142@c.us", "+14155550199"),
    phone: fc.integer({ min: 1_000, max: 9_999 }).map((n) => `+1415555${n}`),
    from: fc.constantFrom("+14155550142", "+14155550177"),
    url: fc.constant(`${receiver}/in/fuzz`),
    replyTo: fc.constantFrom("msg_0"),
    events: fc.constantFrom(["*"], ["message.received"], ["message.sent", "contact.created"]),
    source: fc.constantFrom("\\documentclass{article}\\begin{document}fuzz\\end{document}", "x"),
    // a long poll's valid waits run up to 25 s: the fuzz holds at most 1 s (maxMsFor)
    wait: fc.constantFrom(0, 1),
  };
  // Webhook URLs only of the local receiver: deliveries to made-up hosts would still be retried after the suite.
  const arbs = new SchemaArbitraries(doc.components.schemas, hints, new Set(["url"]));
  const params = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === "path");
  const queryParams = params.filter((p) => p.in === "query");
  const bodySchema = op.requestBody?.content["application/json"]?.schema;

  const pathValues = fc.tuple(
    ...pathParams.map((p) => {
      const real = realIdFor(path, p.name, fx.ids);
      return real ? fc.oneof({ arbitrary: fc.constant(real), weight: 2 }, { arbitrary: hostileId, weight: 1 }) : hostileId;
    }),
  );
  const queryValues = fc.tuple(
    ...queryParams.map((p) => {
      const valid = arbs.valid(p.schema, p.name).map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
      const bad = p.name === "cursor" ? hostileCursor : fc.oneof(hostileString, fc.constantFrom("-1", "0", "101", "1e3", "1.5", "NaN", "true", "[]"));
      return fc.option(fc.oneof(valid, bad), { nil: undefined });
    }),
  );
  const body: fc.Arbitrary<string | undefined> = bodySchema
    ? fc.oneof(
        { arbitrary: arbs.valid(bodySchema).map((v) => JSON.stringify(v)), weight: 4 },
        { arbitrary: arbs.hostile(bodySchema).map((v) => JSON.stringify(v)), weight: 4 },
        { arbitrary: malformedBody, weight: 2 },
        // Past the route's size limit, or just under it: a huge string in an otherwise valid body.
        { arbitrary: arbs.valid(bodySchema).map((v) => JSON.stringify({ ...(v as object), pad: "p".repeat(1_100_000) })), weight: 1 },
      )
    : method === "get" || method === "head"
      ? fc.constant(undefined)
      : fc.option(malformedBody, { nil: undefined, freq: 4 });
  const headers = fc.record(
    {
      idempotency: fc.oneof(fc.uuid(), hostileString.map((s) => s.slice(0, 400)).filter((s) => /^[\x20-\x7e]*$/.test(s))),
      version: fc.constantFrom("2026-11-01", "1999-01-01", "", "x".repeat(300)),
      contentType: fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "application/vnd.api+json", "multipart/form-data; boundary=x"),
    },
    { requiredKeys: [] },
  );

  return fc.tuple(pathValues, queryValues, body, headers).map(([pv, qv, b, h]) => {
    let url = path;
    pathParams.forEach((p, i) => {
      url = url.replace(`{${p.name}}`, encodeURIComponent(wellFormed(pv[i]!)));
    });
    const search = new URLSearchParams();
    queryParams.forEach((p, i) => {
      if (qv[i] !== undefined) search.append(p.name, qv[i]!);
    });
    const qs = search.toString();
    const headersOut: Record<string, string> = {};
    if (op.security === undefined || (Array.isArray(op.security) && op.security.length > 0)) headersOut.Authorization = `Bearer ${fx.key.key}`;
    if (b !== undefined) headersOut["Content-Type"] = h.contentType ?? "application/json";
    if (h.idempotency !== undefined && method === "post") headersOut["Idempotency-Key"] = h.idempotency;
    if (h.version !== undefined) headersOut["API-Version"] = h.version;
    return { method: method.toUpperCase(), url: qs ? `${url}?${qs}` : url, headers: headersOut, ...(b !== undefined ? { body: b } : {}) };
  });
}

/**
 * Requests that once broke the service (or nearly did), tried first on every run of their
 * operation: cursors of the wrong shape, a template that made a backtracking pattern take
 * seconds, an event too large for its queue after the row was stored, bodies past the limits.
 */
function corpus(path: string, method: string, op: Operation, fx: Fixture): Built[] {
  const auth = { Authorization: `Bearer ${fx.key.key}` };
  const json = { ...auth, "Content-Type": "application/json" };
  const out: Built[] = [];
  const queryNames = (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
  const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(realIdFor(path, name, fx.ids) ?? "x"));
  if (method === "get" && queryNames.includes("cursor")) {
    for (const cursor of ["eyJpZCI6e319", "eyJpZCI6W119", "eyJpZCI6bnVsbH0", "e30", "W10", "bnVsbA", "eyJwb3NpdGlvbiI6e319", "eyJwb3NpdGlvbiI6Ii0xIn0"]) {
      out.push({ method: "GET", url: `${url}?cursor=${cursor}`, headers: auth });
    }
  }
  const slowTemplate = `{{${" ".repeat(4_094)}`;
  const bigAttributes = { blob: "a".repeat(900 * 1024) };
  const bigComponents = [{ type: "body", parameters: Array.from({ length: 200 }, () => ({ type: "text", text: "c".repeat(4_000) })) }];
  const bodies: Record<string, unknown[]> = {
    "post /api/campaigns": [
      { name: "slow", sessionId: fx.ids.session, message: { text: slowTemplate }, audience: { all: true } },
      { name: "big", sessionId: fx.ids.session, message: { template: { name: "t", language: "en", components: bigComponents } }, audience: { all: true } },
    ],
    "put /api/campaigns/{id}": [{ message: { text: slowTemplate } }, { message: { text: `${"{{name}}".repeat(500)}{{` } }],
    "post /api/contacts": [{ phone: "+14155550999", attributes: bigAttributes }],
    "put /api/contacts/{id}": [{ attributes: bigAttributes }],
    "post /api/contacts/import": [{ contacts: [{ phone: "+14155550998", attributes: bigAttributes }] }],
    "post /api/messages/send": [{ sessionId: fx.ids.session, to: "+14155550142", template: { name: "t", language: "en", components: bigComponents } }],
    "post /api/messages/send-bulk": [{ sessionId: fx.ids.session, messages: [{ to: "+14155550142", template: { name: "t", language: "en", components: bigComponents } }] }],
  };
  for (const body of bodies[`${method} ${path}`] ?? []) out.push({ method: method.toUpperCase(), url, headers: json, body: JSON.stringify(body) });
  if (op.requestBody) {
    out.push({ method: method.toUpperCase(), url, headers: json, body: "[".repeat(200_000) + "]".repeat(200_000) });
    out.push({ method: method.toUpperCase(), url, headers: json, body: '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}' });
  }
  return out;
}

async function send(req: Built): Promise<{ status: number; ms: number; contentType: string; text: string }> {
  const started = performance.now();
  const res = await api(req.url, { method: req.method, headers: req.headers, ip: freshIp(), ...(req.body !== undefined ? { body: req.body } : {}) });
  const text = await res.text();
  return { status: res.status, ms: performance.now() - started, contentType: res.headers.get("Content-Type") ?? "", text };
}

function describeReq(req: Built): string {
  const body = req.body === undefined ? "" : ` body(${req.body.length})=${req.body.slice(0, 300)}`;
  return `${req.method} ${req.url.slice(0, 300)}${body}`;
}

const doc = (await (await api("/openapi.json")).json()) as Doc;
const operations = Object.entries(doc.paths)
  .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })))
  // Deletions last, so the other operations still find the fixture's resources.
  .sort((a, b) => Number(a.method === "delete") - Number(b.method === "delete"));

describe("fuzz: every operation of /openapi.json answers < 500 within 2 s (plus any wait its contract adds)", () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await fixture();
  });

  it("covers every documented operation", () => {
    expect(operations.length).toBeGreaterThan(40);
  });

  operations.forEach(({ path, method, op }, index) => {
    it(`${method.toUpperCase()} ${path}`, async () => {
      const seen: { status: number; ms: number }[] = [];
      await fc.assert(
        fc.asyncProperty(operationArbitrary(doc, path, method, op, fx), async (req) => {
          const res = await send(req);
          seen.push(res);
          const what = `${describeReq(req)} -> ${res.status} in ${res.ms.toFixed(0)} ms: ${res.text.slice(0, 300)}`;
          expect(res.status, what).toBeLessThan(500);
          expect(res.ms, what).toBeLessThan(maxMsFor(path));
          if (res.status >= 400) {
            expect(res.contentType, what).toContain("application/json");
            const err = (JSON.parse(res.text) as { error?: { code?: unknown; message?: unknown } }).error;
            expect(typeof err?.code, what).toBe("string");
            expect(typeof err?.message, what).toBe("string");
          }
        }),
        { seed: SEED + index, numRuns: RUNS, endOnFailure: true, examples: corpus(path, method, op, fx).map((req) => [req]) },
      );
      expect(seen.length).toBeGreaterThanOrEqual(RUNS);
    });
  });
});
