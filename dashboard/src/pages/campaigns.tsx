import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, must, type Schemas } from "../api.ts";
// The server's own renderer: the preview is exactly what the contact will receive.
import { parseTemplate, renderTemplate, TemplateError } from "../../../src/messaging/campaigns/template.ts";
import { DataTable, ErrorBox, FieldError, StatusBadge, useAction, useEvents, useLoad, when } from "../ui.tsx";
import { listSessions } from "./sessions.tsx";

type Campaign = Schemas["Campaign"];

function templateProblem(text: string): string | null {
  try {
    parseTemplate(text);
    return null;
  } catch (e) {
    return e instanceof TemplateError ? e.message : String(e);
  }
}

function NewCampaign({ onCreated }: { onCreated: (c: Campaign) => void }) {
  const sessions = useLoad(listSessions);
  const contacts = useLoad(() => must(api().GET("/api/contacts", { params: { query: { limit: 100 } } })));
  const [name, setName] = useState("");
  const [sessionId, setSessionId] = useState("");
  const [audience, setAudience] = useState<"all" | "tags">("all");
  const [tags, setTags] = useState("");
  const [text, setText] = useState("Hi {{name|there}}!");
  const [perMinute, setPerMinute] = useState("");
  const [scheduledAt, setScheduledAt] = useState("");
  const [previewFor, setPreviewFor] = useState("");
  const act = useAction();
  const problem = templateProblem(text);
  const contact = contacts.data?.data.find((c) => c.id === previewFor) ?? contacts.data?.data[0];
  const preview = !problem && contact ? renderTemplate(text, contact) : null;

  useEffect(() => {
    if (!sessionId && sessions.data?.data[0]) setSessionId(sessions.data.data.find((s) => s.status !== "STOPPED")?.id ?? "");
  }, [sessions.data]);

  async function create(e: Event) {
    e.preventDefault();
    const tagList = tags
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean);
    const body: Schemas["CreateCampaign"] = {
      name,
      sessionId,
      message: { text },
      audience: audience === "all" ? { all: true } : { tags: tagList },
      ...(perMinute ? { pacing: { perMinute: Number(perMinute) } } : {}),
      ...(scheduledAt ? { scheduledAt: new Date(scheduledAt).toISOString() } : {}),
    };
    const c = await act.run(() => must(api().POST("/api/campaigns", { body })));
    if (c) onCreated(c);
  }

  return (
    <form class="card stack" onSubmit={create} aria-labelledby="new-campaign" noValidate>
      <h2 id="new-campaign">New campaign</h2>
      <label for="cp-name">Name</label>
      <input id="cp-name" value={name} onInput={(e) => setName(e.currentTarget.value)} aria-describedby="cp-name-err" />
      <FieldError error={act.error} path="name" id="cp-name-err" />
      <label for="cp-session">Session</label>
      <select id="cp-session" value={sessionId} onChange={(e) => setSessionId(e.currentTarget.value)} aria-describedby="cp-session-err">
        <option value="">Choose…</option>
        {sessions.data?.data.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name} ({s.status})
          </option>
        ))}
      </select>
      <FieldError error={act.error} path="sessionId" id="cp-session-err" />
      <fieldset>
        <legend>Audience</legend>
        <label class="check">
          <input type="radio" name="audience" checked={audience === "all"} onChange={() => setAudience("all")} /> All contacts
        </label>
        <label class="check">
          <input type="radio" name="audience" checked={audience === "tags"} onChange={() => setAudience("tags")} /> Contacts with tags
        </label>
        {audience === "tags" && (
          <>
            <label for="cp-tags">Tags (comma separated)</label>
            <input id="cp-tags" value={tags} onInput={(e) => setTags(e.currentTarget.value)} aria-describedby="cp-audience-err" />
          </>
        )}
        <FieldError error={act.error} path="audience" id="cp-audience-err" />
      </fieldset>
      <label for="cp-text">Text</label>
      <textarea id="cp-text" rows={4} value={text} onInput={(e) => setText(e.currentTarget.value)} aria-describedby="cp-text-help cp-text-err" aria-invalid={problem ? "true" : undefined} />
      <span class="hint" id="cp-text-help">
        Variables: {"{{name}}"}, {"{{phone}}"}, {"{{email}}"}, {"{{attributes.KEY}}"}, with a default after |: {"{{name|there}}"}.
      </span>
      {problem ? (
        <span class="field-error" id="cp-text-err" role="alert">
          {problem}
        </span>
      ) : (
        <FieldError error={act.error} path="message" id="cp-text-err" />
      )}
      <div class="preview">
        <label for="cp-preview-for">Preview for</label>
        <select id="cp-preview-for" value={contact?.id ?? ""} onChange={(e) => setPreviewFor(e.currentTarget.value)}>
          {contacts.data?.data.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name ?? c.phone ?? c.chatId} ({c.phone ?? c.chatId})
            </option>
          ))}
        </select>
        <p class="bubble out" aria-live="polite" data-testid="campaign-preview">
          {preview ?? (contact ? "—" : "Add a contact to see a preview.")}
        </p>
      </div>
      <label for="cp-pace">Messages per minute (optional)</label>
      <input id="cp-pace" type="number" min={1} max={6000} value={perMinute} onInput={(e) => setPerMinute(e.currentTarget.value)} aria-describedby="cp-pace-err" />
      <FieldError error={act.error} path="pacing" id="cp-pace-err" />
      <label for="cp-when">Schedule for (optional)</label>
      <input id="cp-when" type="datetime-local" value={scheduledAt} onInput={(e) => setScheduledAt(e.currentTarget.value)} aria-describedby="cp-when-err" />
      <FieldError error={act.error} path="scheduledAt" id="cp-when-err" />
      <button type="submit" disabled={act.busy || !!problem}>
        Create draft
      </button>
      <ErrorBox error={act.error} />
    </form>
  );
}

/** Seconds as the largest sensible unit: a campaign held by the messaging limit can take days. */
function left(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

function Progress({ c }: { c: Campaign }) {
  const s = c.stats;
  const done = s.total - s.pending;
  const pct = s.total > 0 ? Math.round((done / s.total) * 100) : c.status === "completed" ? 100 : 0;
  return (
    <div class="progress">
      <progress max={100} value={pct} aria-label={`Campaign progress ${pct} %`} data-testid="campaign-progress" />
      <span data-testid="campaign-pct">{pct} %</span>
      <p class="muted">
        {s.total} recipients: {s.sent} sent, {s.delivered} delivered, {s.read} read, {s.failed} failed, {s.skipped} skipped, {s.pending} pending
        {c.etaSeconds !== null && c.status === "running" ? ` · about ${left(c.etaSeconds)} left` : ""}
      </p>
      {c.eta && c.status === "running" ? (
        <p class="muted" data-testid="campaign-eta">
          Should finish by {when(c.eta)} (the session's pacing and sending limits)
        </p>
      ) : null}
    </div>
  );
}

function CampaignDetail({ id, onChanged }: { id: string; onChanged: () => void }) {
  const campaign = useLoad(() => must(api().GET("/api/campaigns/{id}", { params: { path: { id } } })), [id]);
  const recipients = useLoad(() => must(api().GET("/api/campaigns/{id}/recipients", { params: { path: { id }, query: { limit: 100 } } })), [id]);
  const act = useAction();
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  // Progress moves with the campaign's message events; reload (at most every 300 ms) when one arrives.
  useEvents(
    (e) => {
      const cid = (e.data as { campaignId?: unknown; id?: unknown }).campaignId ?? (e.type === "campaign.completed" ? (e.data as { id?: unknown }).id : undefined);
      if (cid !== id || pending.current) return;
      pending.current = setTimeout(() => {
        pending.current = undefined;
        campaign.reload();
        recipients.reload();
      }, 300);
    },
    [id],
  );
  useEffect(() => () => clearTimeout(pending.current), []);

  async function action(kind: "start" | "pause" | "resume" | "cancel") {
    const path = { params: { path: { id } } };
    const c = await act.run(() =>
      must(
        kind === "start"
          ? api().POST("/api/campaigns/{id}/start", path)
          : kind === "pause"
            ? api().POST("/api/campaigns/{id}/pause", path)
            : kind === "resume"
              ? api().POST("/api/campaigns/{id}/resume", path)
              : api().POST("/api/campaigns/{id}/cancel", path),
      ),
    );
    if (c) {
      campaign.setData(c);
      recipients.reload();
      onChanged();
    }
  }

  const c = campaign.data;
  if (!c) return <ErrorBox error={campaign.error} />;
  const msg = "text" in c.message ? c.message.text : "template" in c.message ? `[template ${c.message.template.name}]` : "type" in c.message ? `[${c.message.type}]` : `[${Object.keys(c.message)[0] ?? "message"}]`;
  return (
    <div class="card" aria-labelledby="cp-detail">
      <h2 id="cp-detail">
        {c.name} <StatusBadge status={c.status} />
      </h2>
      {c.statusReason && <p class="muted">{c.statusReason}</p>}
      <p class="bubble out">{msg}</p>
      <p class="muted">
        Scheduled: {when(c.scheduledAt)} · started {when(c.startedAt)} · completed {when(c.completedAt)}
      </p>
      <Progress c={c} />
      <div class="row wrap">
        {c.status === "draft" && (
          <button type="button" onClick={() => void action("start")}>
            {c.scheduledAt ? "Schedule" : "Start"}
          </button>
        )}
        {c.status === "running" && (
          <button type="button" class="secondary" onClick={() => void action("pause")}>
            Pause
          </button>
        )}
        {c.status === "paused" && (
          <button type="button" onClick={() => void action("resume")}>
            Resume
          </button>
        )}
        {["draft", "scheduled", "running", "paused"].includes(c.status) && (
          <button type="button" class="danger" onClick={() => void action("cancel")}>
            Cancel
          </button>
        )}
      </div>
      <ErrorBox error={act.error} />
      <h3>Recipients</h3>
      <DataTable caption="Recipients" columns={["#", "Name", "Phone", "Status", "Reason"]} error={recipients.error}>
        {recipients.data?.data.map((r) => (
          <tr key={r.seq}>
            <td>{r.seq}</td>
            <td>{r.name ?? "—"}</td>
            <td>{r.phone ?? r.chatId}</td>
            <td>
              <StatusBadge status={r.status} />
            </td>
            <td>{r.reason ?? (r.error ? JSON.stringify(r.error) : "")}</td>
          </tr>
        ))}
      </DataTable>
      {recipients.data?.nextCursor && <p class="hint">First 100 recipients shown.</p>}
    </div>
  );
}

export function Campaigns() {
  const list = useLoad(() => must(api().GET("/api/campaigns", { params: { query: { limit: 100 } } })));
  const [selected, setSelected] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  useEvents((e) => {
    if (e.type === "campaign.completed") list.reload();
  });
  const rows = useMemo(() => list.data?.data ?? [], [list.data]);
  return (
    <section>
      <h1>Campaigns</h1>
      <button type="button" onClick={() => setCreating(!creating)} aria-expanded={creating}>
        {creating ? "Close the form" : "New campaign"}
      </button>
      {creating && (
        <NewCampaign
          onCreated={(c) => {
            setCreating(false);
            setSelected(c.id);
            list.reload();
          }}
        />
      )}
      <DataTable caption="Campaigns" columns={["Name", "Status", "Recipients", "Created"]} error={list.error}>
        {rows.map((c) => (
          <tr key={c.id} aria-selected={c.id === selected}>
            <td>
              <button type="button" class="link" onClick={() => setSelected(c.id)}>
                {c.name}
              </button>
            </td>
            <td>
              <StatusBadge status={c.status} />
            </td>
            <td>{c.stats.total}</td>
            <td>{when(c.createdAt)}</td>
          </tr>
        ))}
      </DataTable>
      {selected && <CampaignDetail key={selected} id={selected} onChanged={list.reload} />}
    </section>
  );
}
