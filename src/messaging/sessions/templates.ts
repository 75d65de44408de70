import { emit } from "../../events/emit.ts";
import { log } from "../../platform/log.ts";
import type { Shard } from "../../platform/shards.ts";
import type { NetworkDriver, NewTemplate, TemplateFromNetwork, TemplateResult, TemplateUpdate } from "../networks/driver.ts";
import { applyTemplateUpdate, deleteTemplateRows, dropTemplatesNotSyncedSince, hasTemplateNamed, MAX_TEMPLATES, templateOf, upsertTemplates } from "../store/templates.ts";
import { toTemplate } from "../templates/mapper.ts";
import type { Template } from "../templates/schemas.ts";

/** A template call of the API, run by the session's object (it holds the credentials). */
export type TemplateOp = { kind: "sync"; force: boolean } | { kind: "create"; template: NewTemplate } | { kind: "delete"; name: string; language?: string; hsmId?: string };

export type TemplateOpFailure = { ok: false; code: string; message: string; status: 404 | 409 | 422 | 503 };
export type TemplateOpResult = { ok: true; syncedAt?: number | null; template?: Template; deleted?: number } | TemplateOpFailure;

/** An unforced sync (a send naming an unknown template) runs at most this often per session. */
const IMPLICIT_SYNC_EVERY_MS = 30_000;
/** Pages of the network's list one sync reads at most. */
const MAX_PAGES = Math.ceil(MAX_TEMPLATES / 100);

function failed(r: Extract<TemplateResult<unknown>, { ok: false }>): TemplateOpFailure {
  return { ok: false, code: r.error.code, message: r.error.message, status: r.transient ? 503 : r.error.code === "business_account_unknown" ? 409 : 422 };
}

interface Parts {
  env: Env;
  identity(): { accountId: string; sessionId: string };
  shard(): Promise<Shard>;
  driver(): NetworkDriver;
  wakeAt(at: number): Promise<void>;
}

/** The session's templates: synced from its network, created and deleted there, kept in D1 (store/templates.ts). */
export class SessionTemplates {
  private lastSync = 0;
  private syncing: Promise<TemplateOpResult> | null = null;

  constructor(private readonly p: Parts) {}

  run(op: TemplateOp): Promise<TemplateOpResult> {
    if (op.kind === "sync") return this.sync(op.force);
    if (op.kind === "create") return this.create(op.template);
    return this.remove(op.name, op.language, op.hsmId);
  }

  /** Brings the cache in line with the network's list; concurrent syncs share one. A network without a list (sandbox) has nothing to sync. */
  private async sync(force: boolean): Promise<TemplateOpResult> {
    const driver = this.p.driver();
    if (!driver.listTemplates) return { ok: true, syncedAt: null };
    if (this.syncing) return this.syncing;
    if (!force && Date.now() - this.lastSync < IMPLICIT_SYNC_EVERY_MS) return { ok: true, syncedAt: this.lastSync };
    this.syncing = this.readAll(driver).finally(() => (this.syncing = null));
    return this.syncing;
  }

  private async readAll(driver: NetworkDriver): Promise<TemplateOpResult> {
    const { accountId, sessionId } = this.p.identity();
    const startedAt = Date.now();
    const all: TemplateFromNetwork[] = [];
    let after: string | null = null;
    let complete = false;
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await driver.listTemplates!(after);
      if (!res.ok) return failed(res);
      all.push(...res.value.templates);
      after = res.value.after;
      if (!after || all.length >= MAX_TEMPLATES) {
        complete = !after;
        break;
      }
    }
    const shard = await this.p.shard();
    // One row per name and language: a list repeating one keeps its last.
    const unique = [...new Map(all.slice(0, MAX_TEMPLATES).map((t) => [`${t.name}\n${t.language}`, t])).values()];
    await upsertTemplates(shard, accountId, sessionId, unique, startedAt);
    // Only a complete list says what the network no longer has.
    if (complete) await dropTemplatesNotSyncedSince(shard, accountId, sessionId, startedAt);
    else log.warn("template sync stopped at its bound", { sessionId, templates: unique.length });
    this.lastSync = startedAt;
    return { ok: true, syncedAt: startedAt };
  }

  private async create(t: NewTemplate): Promise<TemplateOpResult> {
    const { accountId, sessionId } = this.p.identity();
    const shard = await this.p.shard();
    if (await templateOf(shard, accountId, sessionId, t.name, t.language)) {
      return { ok: false, code: "template_exists", message: `A template named ${t.name} in ${t.language} already exists on this session; delete it first or use another name.`, status: 409 };
    }
    const driver = this.p.driver();
    if (!driver.createTemplate) return { ok: false, code: "not_supported", message: "The session's network has no message templates.", status: 409 };
    const res = await driver.createTemplate(t);
    if (!res.ok) return failed(res);
    const now = Date.now();
    await upsertTemplates(shard, accountId, sessionId, [{ name: t.name, language: t.language, externalId: res.value.externalId, status: res.value.status, category: res.value.category, components: t.components, quality: null, rejectedReason: null }], now);
    if (res.value.reviewAt !== undefined) await this.p.wakeAt(res.value.reviewAt);
    const row = await templateOf(shard, accountId, sessionId, t.name, t.language);
    return { ok: true, template: toTemplate(row!) };
  }

  private async remove(name: string, language?: string, hsmId?: string): Promise<TemplateOpResult> {
    const { accountId, sessionId } = this.p.identity();
    const shard = await this.p.shard();
    // One language is deleted at the network by its id (Meta deletes every language of a name otherwise).
    let externalId = hsmId ?? null;
    if (!language && !(await hasTemplateNamed(shard, accountId, sessionId, name))) return { ok: false, code: "not_found", message: "No template was found at this address.", status: 404 };
    if (language && !externalId) {
      const row = await templateOf(shard, accountId, sessionId, name, language);
      if (!row) return { ok: false, code: "not_found", message: "No template was found at this address.", status: 404 };
      externalId = row.externalId;
      if (!externalId) return { ok: false, code: "template_id_unknown", message: "The network's id of this template is not known; sync first (GET with ?refresh=1).", status: 409 };
    }
    const driver = this.p.driver();
    const res = driver.deleteTemplate ? await driver.deleteTemplate(name, externalId) : { ok: true as const, value: null };
    if (!res.ok) return failed(res);
    const deleted = await deleteTemplateRows(shard, accountId, sessionId, name, { ...(language ? { language } : {}), ...(externalId ? { externalId } : {}) });
    return { ok: true, deleted };
  }

  /** The network reported a change (webhook, sandbox review): the row follows, with `template.updated`. */
  async updated(u: TemplateUpdate): Promise<boolean> {
    const { accountId, sessionId } = this.p.identity();
    const row = await applyTemplateUpdate(await this.p.shard(), accountId, sessionId, u, Date.now());
    if (!row) return false;
    await emit(this.p.env, { type: "template.updated", accountId, sessionId, data: toTemplate(row) });
    return true;
  }
}
