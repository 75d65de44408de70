import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api.ts";
import { contactsFromCsv } from "../csv.ts";
import { DataTable, ErrorBox, FieldError, useAction, useEvents, useLoad } from "../ui.tsx";

type Contact = Schemas["Contact"];

function EditContact({ c, onSaved, onCancel }: { c: Contact; onSaved: () => void; onCancel: () => void }) {
  const [name, setName] = useState(c.name ?? "");
  const [email, setEmail] = useState(c.email ?? "");
  const [tags, setTags] = useState(c.tags.join(", "));
  const act = useAction();
  async function save(e: Event) {
    e.preventDefault();
    const body = {
      name: name.trim() || null,
      email: email.trim() || null,
      tags: tags
        .split(",")
        .map((t) => t.trim())
        .filter(Boolean),
    };
    const ok = await act.run(() => must(api().PUT("/api/contacts/{id}", { params: { path: { id: c.id } }, body })));
    if (ok) onSaved();
  }
  return (
    <form class="stack card" onSubmit={save} aria-label={`Edit ${c.phone ?? c.chatId}`}>
      <label for={`ed-name-${c.id}`}>Name</label>
      <input id={`ed-name-${c.id}`} value={name} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
      <FieldError error={act.error} path="name" id={`ed-name-err-${c.id}`} />
      <label for={`ed-email-${c.id}`}>Email</label>
      <input id={`ed-email-${c.id}`} type="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      <FieldError error={act.error} path="email" id={`ed-email-err-${c.id}`} />
      <label for={`ed-tags-${c.id}`}>Tags (comma separated)</label>
      <input id={`ed-tags-${c.id}`} value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
      <FieldError error={act.error} path="tags" id={`ed-tags-err-${c.id}`} />
      <div class="row">
        <button type="submit" disabled={act.busy}>
          Save
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <ErrorBox error={act.error} />
    </form>
  );
}

interface ImportReport {
  created: number;
  existing: number;
  errors: Array<{ line: number; message: string }>;
}

export function Contacts() {
  const [q, setQ] = useState("");
  const [tag, setTag] = useState("");
  const [filter, setFilter] = useState({ q: "", tag: "" });
  const contacts = useLoad(
    () => must(api().GET("/api/contacts", { params: { query: { limit: 100, ...(filter.q ? { q: filter.q } : {}), ...(filter.tag ? { tag: filter.tag } : {}) } } })),
    [filter.q, filter.tag],
  );
  const [editing, setEditing] = useState<string | null>(null);
  const [report, setReport] = useState<ImportReport | null>(null);
  const [csvText, setCsvText] = useState("");
  const act = useAction();

  useEvents((e) => {
    if (e.type === "contact.created") contacts.reload();
  });

  async function toggleOptOut(c: Contact) {
    await act.run(() => must(api().PUT("/api/contacts/{id}", { params: { path: { id: c.id } }, body: { optedOut: !c.optedOut } })));
    contacts.reload();
  }

  async function remove(c: Contact) {
    if (!confirm(`Delete the contact ${c.phone ?? c.chatId}?`)) return;
    await act.run(() => must(api().DELETE("/api/contacts/{id}", { params: { path: { id: c.id } } })));
    contacts.reload();
  }

  async function importCsv(text: string) {
    const { contacts: rows, errors } = contactsFromCsv(text);
    if (rows.length === 0) {
      setReport({ created: 0, existing: 0, errors });
      return;
    }
    const res = await act.run(() => must(api().POST("/api/contacts/import", { body: { contacts: rows.map((r) => r.contact) } })));
    if (!res) return;
    const rejected = res.rejected.map((r) => ({ line: rows[r.index]?.line ?? 0, message: `${r.error.code}: ${r.error.message}` }));
    setReport({ created: res.created, existing: res.existing, errors: [...errors, ...rejected].sort((a, b) => a.line - b.line) });
    contacts.reload();
  }

  return (
    <section>
      <h1>Contacts</h1>
      <form
        class="row wrap"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter({ q: q.trim(), tag: tag.trim() });
        }}
      >
        <label for="ct-q">Search</label>
        <input id="ct-q" type="search" value={q} maxLength={100} placeholder="name or phone" onInput={(e) => setQ(e.currentTarget.value)} />
        <label for="ct-tag">Tag</label>
        <input id="ct-tag" value={tag} maxLength={64} onInput={(e) => setTag(e.currentTarget.value)} />
        <button type="submit" class="secondary">
          Filter
        </button>
      </form>

      <details class="card">
        <summary>Import from CSV</summary>
        <p class="hint">
          First line: column names — <code>phone</code> (required), <code>name</code>, <code>email</code>, <code>tags</code> (separated by <code>;</code>). Up to 1,000 rows.
        </p>
        <label for="csv-file">CSV file</label>
        <input
          id="csv-file"
          type="file"
          accept=".csv,text/csv"
          onChange={(e) => {
            const f = e.currentTarget.files?.[0];
            if (f) void f.text().then(setCsvText);
          }}
        />
        <label for="csv-text">or paste it</label>
        <textarea id="csv-text" rows={5} value={csvText} onInput={(e) => setCsvText(e.currentTarget.value)} />
        <button type="button" disabled={act.busy || !csvText.trim()} onClick={() => void importCsv(csvText)}>
          Import
        </button>
        {report && (
          <div role="status" class="import-report" data-testid="import-report">
            <p>
              {report.created} created, {report.existing} already existed, {report.errors.length} rejected.
            </p>
            {report.errors.length > 0 && (
              <ul class="errors">
                {report.errors.map((er, i) => (
                  <li key={i}>
                    Line {er.line}: {er.message}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
      </details>

      <DataTable caption="Contacts" columns={["Name", "Phone", "Email", "Tags", "Opted out"]} actions error={act.error ?? contacts.error}>
        {contacts.data?.data.map((c) =>
          editing === c.id ? (
            <tr key={c.id}>
              <td colSpan={6}>
                <EditContact
                  c={c}
                  onCancel={() => setEditing(null)}
                  onSaved={() => {
                    setEditing(null);
                    contacts.reload();
                  }}
                />
              </td>
            </tr>
          ) : (
            <tr key={c.id} data-contact={c.id}>
              <td class="contact-name">{c.name ?? "—"}</td>
              <td>{c.phone ?? c.chatId}</td>
              <td>{c.email ?? "—"}</td>
              <td>
                {c.tags.map((t) => (
                  <span key={t} class="tag">
                    {t}
                  </span>
                ))}
              </td>
              <td>
                <label class="check">
                  <input type="checkbox" checked={c.optedOut} onChange={() => void toggleOptOut(c)} /> <span class="sr-only">Opted out: {c.phone ?? c.chatId}</span>
                  {c.optedOut ? "yes" : "no"}
                </label>
              </td>
              <td class="actions">
                <button type="button" class="secondary" onClick={() => setEditing(c.id)} aria-label={`Edit ${c.phone ?? c.chatId}`}>
                  Edit
                </button>
                <button type="button" class="danger" onClick={() => void remove(c)} aria-label={`Delete ${c.phone ?? c.chatId}`}>
                  Delete
                </button>
              </td>
            </tr>
          ),
        )}
      </DataTable>
      {contacts.data?.nextCursor && <p class="hint">Showing the newest 100; narrow the search to find others.</p>}
    </section>
  );
}
