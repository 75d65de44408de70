import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse } from "yaml";

/**
 * Validates requests against the WhatsApp Cloud API's published OpenAPI document (path, method and
 * JSON body). The document is big: it is read and prepared once, and schemas compile lazily.
 */
export interface Verdict {
  ok: boolean;
  operationId?: string;
  errors: string[];
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
    out[k] = prepare(v);
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

interface Operation {
  method: string;
  pattern: RegExp;
  params: { name: string; pattern?: RegExp }[];
  operationId?: string;
  bodyRef?: string;
}

export class GraphValidator {
  private readonly ajv: Ajv2020;
  private readonly operations: Operation[] = [];
  private readonly compiled = new Map<string, ReturnType<Ajv2020["compile"]>>();

  constructor(file: string) {
    const doc = parse(readFileSync(file, "utf8"), { maxAliasCount: -1 }) as Json;
    const components = prepare(doc.components) as Json;
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, logger: false });
    this.ajv.addFormat("url", /^https?:\/\/[^\s]+$/);
    this.ajv.addFormat("uri", /^[a-z][a-z0-9+.-]*:[^\s]*$/i);
    this.ajv.addSchema({ $id: "graph", components }, "graph");
    const params = ((doc.components as Json).parameters ?? {}) as Record<string, Json>;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item)) {
        if (!["get", "post", "put", "delete", "patch"].includes(method)) continue;
        const o = op as Json;
        const declared = ((o.parameters ?? []) as Json[]).map((p) => (p.$ref ? params[String(p.$ref).split("/").pop()!]! : p)).filter((p) => p && p.in === "path");
        const names: string[] = [];
        const regex = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{([^}]+)\}/g, (_m, name: string) => {
          names.push(name);
          return "([^/]+)";
        });
        const body = ((o.requestBody as Json | undefined)?.content as Json | undefined)?.["application/json"] as Json | undefined;
        const schema = body?.schema as Json | undefined;
        this.operations.push({
          method: method.toUpperCase(),
          pattern: new RegExp(`^${regex}$`),
          operationId: o.operationId as string | undefined,
          params: names.map((name) => {
            const d = declared.find((p) => p.name === name);
            const pat = (d?.schema as Json | undefined)?.pattern as string | undefined;
            return { name, pattern: pat ? new RegExp(pat) : undefined };
          }),
          bodyRef: schema?.$ref ? `graph${String(schema.$ref)}` : undefined,
        });
      }
    }
  }

  /**
   * The schema a body is checked against. Marking a message read is a POST to the same
   * `/{Phone-Number-ID}/messages` as a send (Meta's documentation); the document defines its body
   * (`MarkMessageRequestPayload`) without attaching it to the operation, so a body with `status` is
   * checked against that schema instead of `Message`.
   */
  private bodyRefOf(op: Operation, body: unknown): string | undefined {
    if (op.operationId === "sendMessage" && body && typeof body === "object" && "status" in body) return "graph#/components/schemas/MarkMessageRequestPayload";
    return op.bodyRef;
  }

  validate(method: string, path: string, body: unknown): Verdict {
    const candidates = this.operations.filter((op) => op.method === method && op.pattern.test(path));
    if (candidates.length === 0) return { ok: false, errors: [`no operation ${method} ${path} in the reference document`] };
    const errors: string[] = [];
    for (const op of candidates) {
      const values = op.pattern.exec(path)!.slice(1);
      const badParam = op.params.find((p, i) => p.pattern && !p.pattern.test(decodeURIComponent(values[i]!)));
      if (badParam) {
        errors.push(`${op.operationId}: path parameter ${badParam.name} does not match ${badParam.pattern}`);
        continue;
      }
      const bodyRef = this.bodyRefOf(op, body);
      if (!bodyRef) return { ok: true, operationId: op.operationId, errors: [] };
      let validate = this.compiled.get(bodyRef);
      if (!validate) {
        validate = this.ajv.compile({ $ref: bodyRef });
        this.compiled.set(bodyRef, validate);
      }
      if (validate(body)) return { ok: true, operationId: op.operationId, errors: [] };
      errors.push(...(validate.errors ?? []).map((e) => `${op.operationId}: ${e.instancePath || "body"} ${e.message} ${JSON.stringify(e.params)}`));
    }
    return { ok: false, errors };
  }
}
