import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { parse } from "yaml";
import { repairWebhookRefs, WEBHOOK_SUPPLEMENT } from "./webhook-schema.ts";

/**
 * Validates requests to the Cloud API, the fake's answers to them and the webhooks Meta posts,
 * against Meta's published OpenAPI document. The document is big: it is read and prepared once,
 * and schemas compile lazily.
 */
export interface Verdict {
  ok: boolean;
  operationId?: string;
  errors: string[];
}

/** What the fake received: the path without its query, the query, lower-cased headers, the parsed JSON body. */
export interface GraphRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | undefined>;
  body: unknown;
}

type Json = Record<string, unknown>;

/**
 * OpenAPI documents often write `allOf: [Base, {additionalProperties: false, ...}]` meaning "no
 * properties beyond the merged ones". In JSON Schema that literal form rejects Base's properties,
 * so the intent is expressed with `unevaluatedProperties: false` on the allOf instead.
 * `discriminator` is an OpenAPI annotation, not validation; it is dropped (oneOf still decides).
 */
function prepare(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(prepare);
  if (!node || typeof node !== "object") return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === "discriminator" || k === "example" || k === "examples") continue;
    // The document's own references, rebased so a schema compiled on its own still reaches them.
    out[k] = k === "$ref" && typeof v === "string" && v.startsWith("#/") ? `graph${v}` : prepare(v);
  }
  if (Array.isArray(out.allOf)) {
    let closed = false;
    out.allOf = (out.allOf as Json[]).map((member) => {
      if (member && typeof member === "object" && member.additionalProperties === false) {
        closed = true;
        const { additionalProperties: _drop, ...rest } = member;
        return rest;
      }
      return member;
    });
    if (closed) out.unevaluatedProperties = false;
  }
  return out;
}

interface Param {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: Json;
}

/**
 * Query parameters the document leaves out of an operation, from Meta's Graph API reference: every
 * edge pages with `limit` and the cursor `after` and chooses its fields with `fields`
 * (developers.facebook.com/docs/graph-api/results, .../whats-app-business-account/message_templates/).
 */
const QUERY_SUPPLEMENT: Record<string, Param[]> = {
  getTemplateByNameDefaultFields: [
    { name: "fields", in: "query", required: false, schema: { type: "string", pattern: "^[a-z_]+(,[a-z_]+)*$" } },
    { name: "limit", in: "query", required: false, schema: { type: "string", pattern: "^[1-9][0-9]{0,3}$" } },
    { name: "after", in: "query", required: false, schema: { type: "string", minLength: 1, maxLength: 512 } },
  ],
};

interface Operation {
  method: string;
  path: string;
  pattern: RegExp;
  pathNames: string[];
  params: Param[];
  operationId: string;
  bodyRef?: string;
  bodyRequired: boolean;
  responses: Record<string, Json | undefined>;
}

export class GraphValidator {
  private readonly ajv: Ajv2020;
  private readonly operations: Operation[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(file: string) {
    const doc = parse(readFileSync(file, "utf8"), { maxAliasCount: -1 }) as Json;
    const components = prepare(doc.components) as Json;
    components.schemas = repairWebhookRefs(components.schemas as Record<string, unknown>);
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, logger: false });
    this.ajv.addFormat("url", /^https?:\/\/[^\s]+$/);
    this.ajv.addFormat("uri", /^[a-z][a-z0-9+.-]*:[^\s]*$/i);
    this.ajv.addSchema({ $id: "graph", components }, "graph");
    this.ajv.addSchema(WEBHOOK_SUPPLEMENT, "supplement");
    const shared = ((doc.components as Json).parameters ?? {}) as Record<string, Json>;
    const resolve = (p: Json): Json | undefined => (p.$ref ? shared[String(p.$ref).split("/").pop()!] : p);
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      // Parameters of the path item apply to each of its operations unless the operation redeclares them.
      const onItem = ((item.parameters ?? []) as Json[]).map(resolve).filter((p): p is Json => !!p);
      for (const [method, op] of Object.entries(item)) {
        if (!["get", "post", "put", "delete", "patch"].includes(method)) continue;
        const o = op as Json;
        const onOp = ((o.parameters ?? []) as Json[]).map(resolve).filter((p): p is Json => !!p);
        const merged = new Map<string, Json>();
        for (const p of [...onItem, ...onOp]) merged.set(`${p.in}:${String(p.name).toLowerCase()}`, p);
        const pathNames: string[] = [];
        const regex = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{([^}]+)\}/g, (_m, name: string) => {
          pathNames.push(name);
          return "([^/]+)";
        });
        const body = ((o.requestBody as Json | undefined)?.content as Json | undefined)?.["application/json"] as Json | undefined;
        const schema = prepare(body?.schema) as Json | undefined;
        const responses: Record<string, Json | undefined> = {};
        for (const [status, r] of Object.entries((o.responses ?? {}) as Record<string, Json>)) {
          responses[status] = prepare(((r.content as Json | undefined)?.["application/json"] as Json | undefined)?.schema) as Json | undefined;
        }
        this.operations.push({
          method: method.toUpperCase(),
          path,
          pattern: new RegExp(`^${regex}$`),
          pathNames,
          operationId: String(o.operationId ?? `${method} ${path}`),
          params: [
            ...[...merged.values()].map((p) => ({ name: String(p.name), in: p.in as Param["in"], required: p.required === true || p.in === "path", schema: prepare(p.schema ?? {}) as Json })),
            ...(QUERY_SUPPLEMENT[String(o.operationId)] ?? []),
          ],
          bodyRef: schema?.$ref ? String(schema.$ref) : undefined,
          bodyRequired: (o.requestBody as Json | undefined)?.required === true,
          responses,
        });
        if (schema && !schema.$ref) this.compiled.set(`body:${this.operations.at(-1)!.operationId}`, this.ajv.compile(schema));
      }
    }
  }

  /** The operations whose method and path template match, each with the path checked against its own parameters. */
  match(method: string, path: string): { op: Operation; errors: string[] }[] {
    return this.operations
      .filter((op) => op.method === method && op.pattern.test(path))
      .map((op) => {
        const values = op.pattern.exec(path)!.slice(1).map((v) => decodeURIComponent(v));
        const errors = op.pathNames.flatMap((name, i) => {
          const p = op.params.find((x) => x.in === "path" && x.name === name);
          if (!p) return [`${op.operationId}: path parameter ${name} is not declared`];
          return this.check(`path:${op.operationId}:${name}`, p.schema, values[i]).map((e) => `${op.operationId}: path parameter ${name} ${e}`);
        });
        return { op, errors };
      });
  }

  /**
   * Checks a request against the one operation it is for. The caller (the fake) names the operation
   * it serves, since the document has several templates a path fits (`/{Version}/{Phone-Number-ID}`
   * and `/{Version}/{Media-ID}` are both two segments); without a name the path must fit exactly one.
   */
  validate(req: GraphRequest, operationId?: string): Verdict {
    const matches = this.match(req.method, req.path);
    const named = operationId ? matches.filter((m) => m.op.operationId === operationId) : matches.filter((m) => m.errors.length === 0);
    if (named.length !== 1) {
      const why = operationId ? `is not operation ${operationId}` : named.length === 0 ? "matches no operation of the reference document" : `matches several operations (${named.map((m) => m.op.operationId).join(", ")})`;
      return { ok: false, operationId, errors: [`${req.method} ${req.path} ${why}`, ...matches.flatMap((m) => m.errors)] };
    }
    const { op, errors } = named[0]!;
    errors.push(...this.checkParams(op, req), ...this.checkBody(op, req.body));
    return { ok: errors.length === 0, operationId: op.operationId, errors };
  }

  /** Checks an answer against what the operation declares for its status (an error status: Meta's `GraphAPIError`). */
  validateResponse(operationId: string, status: number, body: unknown): Verdict {
    const op = this.operations.find((o) => o.operationId === operationId);
    if (!op) return { ok: false, operationId, errors: [`no operation ${operationId}`] };
    const declared = op.responses[String(status)];
    const schema = declared ?? (status >= 400 ? { $ref: "graph#/components/schemas/GraphAPIError" } : undefined);
    if (!schema) return { ok: false, operationId, errors: [`${operationId} declares no answer with status ${status}`] };
    const errors = this.check(`response:${operationId}:${status}`, schema, body);
    return { ok: errors.length === 0, operationId, errors: errors.map((e) => `${operationId} answer ${status}: ${e}`) };
  }

  /**
   * Checks a webhook payload: `messages` changes against the document's `WebhookPayload` (its names
   * repaired, see webhook-schema.ts); the fields and message kinds the document leaves out against
   * the supplement written from Meta's webhook reference.
   */
  validateWebhook(payload: unknown): Verdict {
    const errors = this.check("webhook", { $ref: "supplement#/$defs/Payload" }, payload);
    return { ok: errors.length === 0, operationId: "webhook", errors };
  }

  private checkParams(op: Operation, req: GraphRequest): string[] {
    const errors: string[] = [];
    for (const key of new Set(req.query.keys())) {
      const p = op.params.find((x) => x.in === "query" && x.name === key);
      if (!p) errors.push(`${op.operationId}: query parameter ${key} is not declared`);
      else errors.push(...this.check(`query:${op.operationId}:${key}`, p.schema, req.query.get(key)).map((e) => `${op.operationId}: query ${key} ${e}`));
    }
    for (const p of op.params) {
      if (p.in === "query" && p.required && !req.query.has(p.name)) errors.push(`${op.operationId}: query parameter ${p.name} is required`);
      if (p.in !== "header") continue;
      const value = req.headers[p.name.toLowerCase()];
      // A body-less request sends no Content-Type; the document marks it required on every operation.
      if (value === undefined) {
        if (p.required && !(p.name.toLowerCase() === "content-type" && req.body === undefined)) errors.push(`${op.operationId}: header ${p.name} is required`);
        continue;
      }
      errors.push(...this.check(`header:${op.operationId}:${p.name}`, p.schema, value).map((e) => `${op.operationId}: header ${p.name} ${e}`));
    }
    return errors;
  }

  private checkBody(op: Operation, body: unknown): string[] {
    if (body === undefined) return op.bodyRequired ? [`${op.operationId}: a body is required`] : [];
    // Marking a message read is a POST to the send path (Meta's documentation); the document defines
    // its body (`MarkMessageRequestPayload`) without attaching it to the operation.
    const ref = op.operationId === "sendMessage" && body && typeof body === "object" && "status" in body ? "graph#/components/schemas/MarkMessageRequestPayload" : op.bodyRef;
    // A send to a business-scoped user id names it in `recipient` instead of `to` (Meta's BSUID guide;
    // the v23 document predates it): a well-formed BSUID there, and the rest as the document's send.
    if (op.operationId === "sendMessage" && body && typeof body === "object" && "recipient" in body) {
      const { recipient, ...rest } = body as Json;
      if ("to" in rest) return [`${op.operationId}: give \`to\` or \`recipient\`, not both`];
      if (typeof recipient !== "string" || !/^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/.test(recipient)) return [`${op.operationId}: recipient must be a BSUID`];
      return this.checkBody(op, { ...rest, to: recipient });
    }
    if (ref) return this.check(ref, { $ref: ref }, body).map((e) => `${op.operationId}: ${e}`);
    const inline = this.compiled.get(`body:${op.operationId}`);
    if (!inline) return [`${op.operationId} takes no body`];
    return inline(body) ? [] : (inline.errors ?? []).map((e) => `${op.operationId}: ${e.instancePath || "body"} ${e.message} ${JSON.stringify(e.params)}`);
  }

  private check(key: string, schema: Json, value: unknown): string[] {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(key, validate);
    }
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "value"} ${e.message} ${JSON.stringify(e.params)}`);
  }
}
