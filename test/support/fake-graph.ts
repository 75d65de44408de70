import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GraphValidator, type GraphRequest, type Verdict } from "./graph-validator.ts";
import { keepIdleConnections } from "./idle-connections.ts";
import { serveTemplates, templateOperation, type FakeTemplate, type Waba } from "./fake-graph-templates.ts";

/**
 * A local fake of the Graph API (WhatsApp Cloud API) for tests. Every request it receives is
 * validated against the one operation of the reference OpenAPI document it serves (path
 * parameters, query, headers, body) and recorded; an invalid one is answered with a Graph error
 * (code 100) so the test fails where it looks, and the run fails at teardown
 * (fake-graph-setup.ts). The fake's own answers are checked against the document too. Control routes under /__fake/:
 *   POST /__fake/phones {phoneNumberId, token, displayPhoneNumber, hostile?}   register a number; a hostile one is
 *        for tests that send invalid requests on purpose: they are recorded (and listed by /__fake/invalid?phones=)
 *        but do not fail the run
 *   POST /__fake/phones/:id/answer {status, body}                       the next send is answered with this, as is
 *        (still checked against the document: a wrong one is recorded as the fake's own invalid answer)
 *   POST /__fake/phones/:id/fail {code, times?}                        next sends fail with a Graph error code
 *   POST /__fake/phones/:id/stall {mode: "hang"|"drop", times?}        next sends are received (and recorded)
 *        but never answered: held open, or the connection closed without an answer
 *   GET  /__fake/phones/:id/requests                                   what was received for this number
 *   GET  /__fake/invalid[?phones=a,b]                                  every request that failed validation, and
 *        every answer of the fake that did not match what the document declares for it (with phones=: those of
 *        these numbers, hostile ones included; a file's teardown asks for its own numbers)
 *   POST /__fake/webhooks[?hostile=1] <payload>                        checks a webhook payload a test is about to
 *        post against the document's webhook schema (and its supplement); answers the verdict, records a failure
 *   POST /__fake/media {mediaId, phoneNumberId, mimetype, data, failTimes?}   a file a customer sent (base64);
 *        GET /v23.0/{mediaId} answers its download URL (on /cdn/, Meta's CDN), which needs the
 *        number's token (none with `public: true`); the first `failTimes` downloads answer 500
 *   GET  /__fake/media/:id                                             {downloads} so far
 *   /__fake/wabas...: business accounts and their message templates (fake-graph-templates.ts)
 */
interface Phone {
  token: string;
  displayPhoneNumber: string;
  hostile: boolean;
  failures: number[];
  answers: { status: number; body: unknown }[];
  stalls: ("hang" | "drop")[];
  requests: Recorded[];
}

interface MediaFile {
  phoneNumberId: string;
  mimetype: string;
  bytes: Buffer;
  failTimes: number;
  downloads: number;
  /** Served at /cdn/ without a token: stands for any public URL. */
  public: boolean;
}

export interface Recorded {
  /** The number the request or webhook was for (the path's id, or the webhook's metadata), if any. */
  phoneNumberId: string | null;
  method: string;
  path: string;
  authorization: string | null;
  body: unknown;
  valid: boolean;
  errors: string[];
}

const GRAPH_ERRORS: Record<number, { status: number; message: string; type: string }> = {
  190: { status: 401, message: "Error validating access token: Session has expired", type: "OAuthException" },
  130429: { status: 400, message: "(#130429) Rate limit hit", type: "OAuthException" },
  131056: { status: 400, message: "(#131056) (Business Account, Consumer Account) pair rate limit hit", type: "OAuthException" },
  131049: { status: 400, message: "(#131049) This message was not delivered to maintain healthy ecosystem engagement.", type: "OAuthException" },
  131047: { status: 400, message: "(#131047) Re-engagement message", type: "OAuthException" },
  131026: { status: 400, message: "(#131026) Message Undeliverable", type: "OAuthException" },
  131000: { status: 500, message: "(#131000) Something went wrong", type: "OAuthException" },
};

function graphError(code: number, message?: string) {
  const known = GRAPH_ERRORS[code] ?? { status: 400, message: message ?? "(#100) Invalid parameter", type: "OAuthException" };
  return { status: known.status, body: { error: { message: message ?? known.message, type: known.type, code, ...(code === 190 ? { error_subcode: 463 } : {}), fbtrace_id: "AfakeTrace" } } };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The operation a request is for: POST /{v}/{id}/messages is a send; GET /{v}/{id} is a media file's URL when the id
 * names a file, a phone number when it names one; an id naming nothing is a phone number when `fields` is asked for
 * (the driver's check of its number), else a media id (Meta answers "does not exist" either way).
 */
function operationFor(method: string, parts: string[], query: URLSearchParams, isFile: boolean, isPhone: boolean): string | undefined {
  if (method === "POST" && parts.length === 3 && parts[2] === "messages") return "sendMessage";
  if (method !== "GET" || parts.length !== 2) return undefined;
  if (isFile) return "retrieveMediaUrl";
  if (isPhone || query.has("fields")) return "getPhoneNumberById";
  return "retrieveMediaUrl";
}

export async function startFakeGraph(referenceFile: string): Promise<{ url: string; invalid: () => readonly Recorded[]; close: () => Promise<void> }> {
  const validator = new GraphValidator(referenceFile);
  const phones = new Map<string, Phone>();
  const invalid: Recorded[] = [];
  /** Invalid requests on hostile numbers and hostile webhooks: listed by number, never failing the run. */
  const expected: Recorded[] = [];
  const media = new Map<string, MediaFile>();
  const wabas = new Map<string, Waba>();
  const reject = (r: Recorded, hostile: boolean) => (hostile ? expected : invalid).push(r);

  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    try {
      const url = new URL(req.url ?? "/", "http://fake");
      const raw = await readBody(req);
      const json = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
      const parts = url.pathname.split("/").filter(Boolean);

      if (parts[0] === "cdn" && req.method === "GET") {
        const file = media.get(parts[1] ?? "");
        if (!file) return send(404, { error: "no such file" });
        if (!file.public && req.headers.authorization !== `Bearer ${phones.get(file.phoneNumberId)?.token}`) return send(401, { error: "unauthorized" });
        file.downloads++;
        if (file.failTimes > 0) {
          file.failTimes--;
          return send(500, { error: "try again" });
        }
        res.writeHead(200, { "content-type": file.mimetype, "content-length": String(file.bytes.byteLength) });
        return res.end(file.bytes);
      }

      if (parts[0] === "__fake") {
        if (req.method === "POST" && parts[1] === "media") {
          const m = json as { mediaId: string; phoneNumberId: string; mimetype: string; data: string; failTimes?: number; public?: boolean };
          media.set(m.mediaId, { phoneNumberId: m.phoneNumberId, mimetype: m.mimetype, bytes: Buffer.from(m.data, "base64"), failTimes: m.failTimes ?? 0, downloads: 0, public: m.public ?? false });
          return send(201, { ok: true });
        }
        if (req.method === "GET" && parts[1] === "media" && parts[2]) return send(200, { downloads: media.get(parts[2])?.downloads ?? 0 });
        if (parts[1] === "wabas") {
          if (req.method === "POST" && parts.length === 2) {
            const w = json as { wabaId: string; token: string; templates?: FakeTemplate[] };
            wabas.set(w.wabaId, { token: w.token, templates: w.templates ?? [], requests: [] });
            return send(201, { ok: true });
          }
          const waba = wabas.get(parts[2] ?? "");
          if (!waba) return send(404, { error: "no such waba" });
          if (req.method === "GET" && parts.length === 3) return send(200, waba);
          if (req.method === "POST" && parts[3] === "templates" && parts[4]) {
            const change = json as Partial<FakeTemplate> & { language: string };
            const t = waba.templates.find((x) => x.name === parts[4] && x.language === change.language);
            if (!t) return send(404, { error: "no such template" });
            Object.assign(t, change);
            return send(200, t);
          }
        }
        if (req.method === "POST" && parts[1] === "phones" && parts.length === 2) {
          const p = json as { phoneNumberId: string; token: string; displayPhoneNumber: string; hostile?: boolean };
          phones.set(p.phoneNumberId, { token: p.token, displayPhoneNumber: p.displayPhoneNumber, hostile: p.hostile === true, failures: [], answers: [], stalls: [], requests: [] });
          return send(201, { ok: true });
        }
        const phone = phones.get(parts[2] ?? "");
        if (req.method === "POST" && parts[3] === "fail" && phone) {
          const { code, times = 1 } = json as { code: number; times?: number };
          for (let i = 0; i < times; i++) phone.failures.push(code);
          return send(200, { ok: true });
        }
        if (req.method === "POST" && parts[3] === "answer" && phone) {
          phone.answers.push(json as { status: number; body: unknown });
          return send(200, { ok: true });
        }
        if (req.method === "POST" && parts[3] === "stall" && phone) {
          const { mode, times = 1 } = json as { mode: "hang" | "drop"; times?: number };
          for (let i = 0; i < times; i++) phone.stalls.push(mode);
          return send(200, { ok: true });
        }
        if (req.method === "GET" && parts[3] === "requests" && phone) return send(200, phone.requests);
        if (req.method === "GET" && parts[1] === "invalid") {
          const only = url.searchParams.get("phones");
          if (only === null) return send(200, invalid);
          const wanted = new Set(only.split(","));
          return send(200, [...invalid, ...expected].filter((r) => r.phoneNumberId !== null && wanted.has(r.phoneNumberId)));
        }
        if (req.method === "POST" && parts[1] === "webhooks") {
          const verdict = validator.validateWebhook(json);
          const value = (json as { entry?: { changes?: { value?: { metadata?: { phone_number_id?: unknown } } }[] }[] } | undefined)?.entry?.[0]?.changes?.[0]?.value;
          const phoneNumberId = typeof value?.metadata?.phone_number_id === "string" ? value.metadata.phone_number_id : null;
          if (!verdict.ok) reject({ phoneNumberId, method: "WEBHOOK", path: "/whatsapp/webhooks", authorization: null, body: json ?? null, valid: false, errors: verdict.errors }, url.searchParams.get("hostile") === "1");
          return send(200, verdict);
        }
        return send(404, { error: "unknown control route" });
      }

      const method = req.method ?? "GET";
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : v]));
      const graphReq: GraphRequest = { method, path: url.pathname, query: url.searchParams, headers, body: json };
      const file = method === "GET" && parts.length === 2 ? media.get(parts[1]!) : undefined;
      const phone = phones.get(parts[1] ?? "");
      const waba = parts[2] === "message_templates" && parts.length === 3 ? wabas.get(parts[1] ?? "") : undefined;
      // The one operation the fake serves for this request, by method and path shape and what the id names, as
      // Meta does: a request is checked against that operation only, never against whichever one it happens to fit.
      const route = waba ? templateOperation(method) : operationFor(method, parts, url.searchParams, !!file, !!phone);
      const verdict: Verdict = route ? validator.validate(graphReq, route) : { ok: false, errors: [`${method} ${url.pathname} is no operation the fake serves (it serves GET /{Version}/{Phone-Number-ID}, GET /{Version}/{Media-ID}, POST /{Version}/{Phone-Number-ID}/messages and the message_templates of a registered business account)`] };
      const record: Recorded = { phoneNumberId: phone ? (parts[1] ?? null) : (file?.phoneNumberId ?? null), method, path: url.pathname + url.search, authorization: req.headers.authorization ?? null, body: json ?? null, valid: verdict.ok, errors: verdict.errors };
      phone?.requests.push(record);
      waba?.requests.push({ method, path: record.path, body: record.body });
      const hostile = phone?.hostile ?? (file ? (phones.get(file.phoneNumberId)?.hostile ?? false) : false);
      const answer = (status: number, body: unknown) => {
        const checked = verdict.operationId ? validator.validateResponse(verdict.operationId, status, body) : { ok: true, errors: [] };
        if (!checked.ok) {
          const bad = { ...record, valid: false, errors: [`the fake's own answer: ${checked.errors.join("; ")}`] };
          reject(bad, hostile);
          // The number's record says so too, so a test can see which check failed.
          if (phone) phone.requests[phone.requests.length - 1] = bad;
        }
        send(status, body);
      };
      if (!verdict.ok) {
        reject(record, hostile);
        const e = graphError(100, `(#100) Invalid parameter: ${verdict.errors.slice(0, 3).join("; ")}`);
        return send(e.status, e.body);
      }
      if (file) {
        if (req.headers.authorization !== `Bearer ${phones.get(file.phoneNumberId)?.token}`) {
          const e = graphError(190);
          return answer(e.status, e.body);
        }
        const sha256 = createHash("sha256").update(file.bytes).digest("base64");
        // The document has file_size as a string.
        return answer(200, { messaging_product: "whatsapp", url: `http://${req.headers.host}/cdn/${parts[1]}`, mime_type: file.mimetype, sha256, file_size: String(file.bytes.byteLength), id: parts[1] });
      }
      if (waba && route) {
        if (req.headers.authorization !== `Bearer ${waba.token}`) {
          const e = graphError(190);
          return answer(e.status, e.body);
        }
        return serveTemplates(waba, method, url.searchParams, json, answer, graphError);
      }
      if (!phone || !route) return answer(400, graphError(100, `Unsupported ${method.toLowerCase()} request. Object with ID '${parts[1] ?? ""}' does not exist`).body);
      if (req.headers.authorization !== `Bearer ${phone.token}`) {
        const e = graphError(190);
        return answer(e.status, e.body);
      }
      if (route === "getPhoneNumberById") {
        return answer(200, { id: parts[1], display_phone_number: phone.displayPhoneNumber, verified_name: "Fake Business", quality_rating: "GREEN" });
      }
      const body = json as { status?: string; to?: string; recipient?: string };
      const stall = body.status === "read" ? undefined : phone.stalls.shift();
      // Meta got the whole request and may have sent it; the caller never learns (closeAllConnections ends a hang).
      if (stall === "hang") return;
      if (stall === "drop") return void req.socket.destroy();
      const scripted = phone.answers.shift();
      if (scripted) return answer(scripted.status, scripted.body);
      const failure = phone.failures.shift();
      if (failure !== undefined) {
        const e = graphError(failure);
        return answer(e.status, e.body);
      }
      if (body.status === "read") return answer(200, { success: true });
      const to = String(body.to ?? body.recipient);
      const contact = body.to === undefined ? { input: to, user_id: to } : { input: to, wa_id: to };
      return answer(200, { messaging_product: "whatsapp", contacts: [contact], messages: [{ id: `wamid.${randomBytes(12).toString("hex")}` }] });
    } catch (err) {
      send(500, { error: { message: String(err), type: "FakeError", code: 1 } });
    }
  });
  keepIdleConnections(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, invalid: () => invalid, close: () => new Promise((resolve) => {
      server.close(() => resolve());
      // Keep-alive connections of the Worker under test would hold close() open.
      server.closeAllConnections();
    }) };
}
