import { ApiError, errors } from "../../platform/errors.ts";
import { iso } from "../../platform/time.ts";
import { accountShard } from "../../platform/shards.ts";
import type { TemplateSpec } from "../messages/schemas.ts";
import { loadSession, ownedSessionStub } from "../sessions/service.ts";
import type { TemplateOp, TemplateOpResult } from "../sessions/templates.ts";
import { decodeCursor, IdCursor, toPage } from "../../platform/pagination.ts";
import { lastSyncedAt, MAX_TEMPLATES, sessionTemplates, templateCount, templateOf } from "../store/templates.ts";
import { toTemplate, type TemplateRow } from "./mapper.ts";
import { createIssues, sendIssues, type TemplateComponent } from "./rules.ts";
import type { CreateTemplateBody, Template } from "./schemas.ts";

/** Runs a template call in the session's object (which holds the network credentials); its failure as our error. */
async function runOp(env: Env, accountId: string, sessionId: string, op: TemplateOp): Promise<Extract<TemplateOpResult, { ok: true }>> {
  const res = (await (await ownedSessionStub(env, accountId, sessionId)).templates(accountId, op)) as TemplateOpResult;
  if (res.ok) return res;
  if (res.status === 404) throw errors.notFound(res.code === "not_found" && op.kind === "delete" ? "template" : "session");
  if (res.status === 503) throw errors.unavailable(res.message, 30);
  if (res.status === 422) throw errors.unprocessable(res.code, res.message);
  throw errors.conflict(res.code, res.message);
}

/** The session's templates from the cache, in pages; synced from the network first with `refresh`, or when none are cached. */
export async function listTemplates(env: Env, accountId: string, sessionId: string, q: { refresh?: string; limit: number; cursor?: string }): Promise<{ data: Template[]; nextCursor: string | null; syncedAt: string | null }> {
  const session = await loadSession(env, accountId, sessionId);
  const cursor = decodeCursor(q.cursor, IdCursor);
  const shard = await accountShard(env, accountId);
  const refresh = q.refresh === "1" || q.refresh === "true";
  if (refresh || (!cursor && session.status === "WORKING" && (await templateCount(shard, accountId, sessionId)) === 0)) {
    await runOp(env, accountId, sessionId, { kind: "sync", force: refresh });
  }
  const rows = await sessionTemplates(shard, accountId, sessionId, { afterId: cursor?.id, limit: q.limit + 1 });
  const page = toPage(rows, q.limit, (r) => ({ id: r.id }));
  return { data: page.data.map(toTemplate), nextCursor: page.nextCursor, syncedAt: iso(await lastSyncedAt(shard, accountId, sessionId)) };
}

/** Checked against Meta's rules (400 naming each), then created at the network. */
export async function createTemplate(env: Env, accountId: string, sessionId: string, body: CreateTemplateBody): Promise<Template> {
  const issues = createIssues(body as { name: string; language: string; category: string; components: TemplateComponent[] });
  if (issues.length) throw errors.invalidRequest(`The template breaks the network's rules: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`, issues);
  await loadSession(env, accountId, sessionId);
  if ((await templateCount(await accountShard(env, accountId), accountId, sessionId)) >= MAX_TEMPLATES) {
    throw errors.conflict("template_limit", `The session has ${MAX_TEMPLATES} templates, the most it keeps; delete some first.`);
  }
  const res = await runOp(env, accountId, sessionId, { kind: "create", template: body });
  return res.template!;
}

export async function deleteTemplate(env: Env, accountId: string, sessionId: string, name: string, q: { language?: string; hsmId?: string }): Promise<{ name: string; deleted: number }> {
  await loadSession(env, accountId, sessionId);
  const res = await runOp(env, accountId, sessionId, { kind: "delete", name, ...q });
  return { name, deleted: res.deleted ?? 0 };
}

/**
 * Checks template sends against the session's synced templates before anything is sent: unknown
 * name or language 400, not APPROVED 409 `template_not_approved`, a parameter missing or extra 400.
 * A template not cached makes one sync first (once per checker: a bulk send shares it).
 */
export function templateChecker(env: Env, accountId: string, sessionId: string) {
  let synced = false;
  // A bulk send names few templates many times: each is read once.
  const seen = new Map<string, TemplateRow | undefined>();
  const read = async (name: string, language: string) => {
    const key = `${name}\n${language}`;
    if (!seen.has(key)) seen.set(key, await templateOf(await accountShard(env, accountId), accountId, sessionId, name, language));
    return seen.get(key);
  };
  // A WhatsApp session created without its business account id cannot list its templates: its
  // template sends go to Meta unchecked, as before templates were known, rather than all failing.
  let unknowable = false;
  return async (spec: TemplateSpec, path = "template"): Promise<void> => {
    let row = await read(spec.name, spec.language);
    if (!row && !synced) {
      synced = true;
      try {
        await runOp(env, accountId, sessionId, { kind: "sync", force: false });
      } catch (err) {
        if (!(err instanceof ApiError && err.code === "business_account_unknown")) throw err;
        unknowable = true;
      }
      seen.clear();
      row = await read(spec.name, spec.language);
    }
    if (!row && unknowable) return;
    if (!row) {
      throw errors.invalidRequest(`${path}: the session has no template ${spec.name} in ${spec.language} (GET /api/sessions/${sessionId}/templates lists them).`, [{ path: `${path}.name`, message: `no template ${spec.name} in ${spec.language}` }]);
    }
    if (row.status !== "APPROVED") {
      throw errors.conflict("template_not_approved", `The template ${spec.name} (${spec.language}) is ${row.status}; only APPROVED templates can be sent.`, { status: row.status });
    }
    const issues = sendIssues(JSON.parse(row.components) as TemplateComponent[], spec.components, `${path}.components`);
    if (issues.length) throw errors.invalidRequest(`${path}: ${issues.map((i) => i.message).join("; ")}.`, issues);
  };
}

export async function checkTemplateSend(env: Env, accountId: string, sessionId: string, spec: TemplateSpec, path?: string): Promise<void> {
  await templateChecker(env, accountId, sessionId)(spec, path);
}
