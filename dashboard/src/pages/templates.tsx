import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api.ts";
import { variablesOf } from "../../../src/messaging/templates/rules.ts";
import { DataTable, FieldError, StatusBadge, useAction, useEvents, useLoad } from "../ui.tsx";

const CATEGORIES = ["UTILITY", "MARKETING", "AUTHENTICATION"] as const;

/** A session's message templates (synced from its network) and a form to create one. */
export function SessionTemplates({ session }: { session: Schemas["Session"] }) {
  const id = session.id;
  const list = useLoad(() => must(api().GET("/api/sessions/{id}/templates", { params: { path: { id }, query: { limit: 100 } } })), [id]);
  const [form, setForm] = useState({ name: "", language: "en_US", category: "UTILITY" as (typeof CATEGORIES)[number], body: "", examples: "", footer: "" });
  const act = useAction();

  // The network's reviews and quality changes arrive as template.updated: the row is replaced.
  useEvents((e) => {
    if (e.type !== "template.updated") return;
    const t = e.data as unknown as Schemas["Template"];
    if (t.sessionId !== id) return;
    list.setData((cur) => (cur ? { ...cur, data: cur.data.map((x) => (x.id === t.id ? t : x)) } : cur));
  }, [id]);

  async function refresh() {
    const fresh = await act.run(() => must(api().GET("/api/sessions/{id}/templates", { params: { path: { id }, query: { refresh: "1", limit: 100 } } })));
    if (fresh) list.setData(fresh);
  }

  async function create(e: Event) {
    e.preventDefault();
    // One example per body parameter, separated by "|" (Meta requires them).
    const examples = form.examples.split("|").map((s) => s.trim()).filter(Boolean);
    const components: Schemas["TemplateComponentInput"][] = [{ type: "BODY", text: form.body, ...(variablesOf(form.body).length ? { example: { body_text: [examples] } } : {}) }];
    if (form.footer.trim()) components.push({ type: "FOOTER", text: form.footer });
    const body: Schemas["CreateTemplate"] = { name: form.name, language: form.language, category: form.category, components };
    const t = await act.run(() => must(api().POST("/api/sessions/{id}/templates", { params: { path: { id } }, body })));
    if (t) {
      setForm({ ...form, name: "", body: "", examples: "", footer: "" });
      list.reload();
    }
  }

  const field = (k: "name" | "language" | "body" | "examples" | "footer", label: string, path: string, extra: Record<string, unknown> = {}) => (
    <div>
      <label for={`tpl-${k}-${id}`}>{label}</label>
      <input id={`tpl-${k}-${id}`} value={form[k]} onInput={(e) => setForm({ ...form, [k]: e.currentTarget.value })} aria-describedby={`tpl-${k}-${id}-err`} {...extra} />
      <FieldError error={act.error} path={path} id={`tpl-${k}-${id}-err`} />
    </div>
  );

  return (
    <div class="card" role="region" aria-label={`Templates of ${session.name}`}>
      <h2>Templates of {session.name}</h2>
      <button type="button" class="secondary" onClick={() => void refresh()} disabled={act.busy}>
        Sync from the network
      </button>
      <DataTable caption={`Templates of ${session.name}`} columns={["Name", "Language", "Status", "Category", "Quality"]} error={act.error ?? list.error}>
        {list.data?.data.map((t) => (
          <tr key={t.id} data-template={t.name}>
            <td>{t.name}</td>
            <td>{t.language}</td>
            <td>
              <StatusBadge status={t.status} />
              {t.rejectedReason && <span class="muted"> {t.rejectedReason}</span>}
            </td>
            <td>{t.category}</td>
            <td>{t.quality ?? "—"}</td>
          </tr>
        ))}
      </DataTable>
      <form onSubmit={create} aria-label="New template">
        <h3>New template</h3>
        {field("name", "Name (lowercase, digits, _)", "name", { required: true, maxLength: 512 })}
        {field("language", "Language", "language", { required: true, maxLength: 15 })}
        <label for={`tpl-category-${id}`}>Category</label>
        <select id={`tpl-category-${id}`} value={form.category} onChange={(e) => setForm({ ...form, category: e.currentTarget.value as (typeof CATEGORIES)[number] })}>
          {CATEGORIES.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
        {field("body", "Body ({{1}}, {{2}}, ... for parameters)", "components.0.text", { required: true, maxLength: 1024 })}
        {field("examples", "Body examples (one per parameter, separated by |)", "components.0.example")}
        {field("footer", "Footer (optional)", "components.1.text", { maxLength: 60 })}
        <button type="submit" disabled={act.busy || !form.name.trim() || !form.body.trim()}>
          Create template
        </button>
      </form>
    </div>
  );
}
