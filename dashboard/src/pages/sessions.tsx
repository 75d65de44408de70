import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api.ts";
import { DataTable, FieldError, Link, StatusBadge, useAction, useEvents, useLoad, when } from "../ui.tsx";
import { SessionTemplates } from "./templates.tsx";

export function listSessions() {
  return must(api().GET("/api/sessions", { params: { query: { limit: 100 } } }));
}

/** What Meta last said of the business account's standing, in a line (live through session.restricted). */
function healthText(h: NonNullable<Schemas["Session"]["health"]>): string {
  if (h.state === "restricted") {
    const until = h.restrictions?.map((r) => (r.expiresAt ? `${r.type} until ${when(r.expiresAt)}` : r.type)).join("; ");
    return `Restricted by Meta${until ? `: ${until}` : ""}`;
  }
  if (h.state === "ban_scheduled") return `Ban scheduled by Meta${h.banDate ? ` for ${h.banDate}` : ""}`;
  if (h.state === "banned") return "Banned by Meta: the number cannot send";
  return `Policy violation recorded by Meta${h.violation ? `: ${h.violation}` : ""}`;
}

export function Sessions() {
  const sessions = useLoad(listSessions);
  const [name, setName] = useState("");
  const [network, setNetwork] = useState<"sandbox" | "whatsapp">("sandbox");
  const [wa, setWa] = useState({ phoneNumberId: "", businessAccountId: "", accessToken: "", appSecret: "", verifyToken: "" });
  const [templatesOf, setTemplatesOf] = useState<string | null>(null);
  const act = useAction();

  // Status changes arrive as session events; the row is replaced by the event's copy of the session.
  useEvents((e) => {
    if (!e.type.startsWith("session.")) return;
    const s = e.data as unknown as Schemas["Session"];
    if (typeof s.id !== "string") return;
    sessions.setData((cur) => (cur ? { ...cur, data: cur.data.map((x) => (x.id === s.id ? { ...x, ...s } : x)) } : cur));
  });

  async function create(e: Event) {
    e.preventDefault();
    const { businessAccountId, ...creds } = wa;
    const body: Schemas["CreateSession"] = network === "sandbox" ? { name, network } : { name, network, whatsapp: { ...creds, ...(businessAccountId ? { businessAccountId } : {}) } };
    const s = await act.run(() => must(api().POST("/api/sessions", { body })));
    if (s) {
      setName("");
      sessions.reload();
    }
  }

  async function restart(s: Schemas["Session"]) {
    await act.run(() => must(api().POST("/api/sessions/{id}/restart", { params: { path: { id: s.id } } })));
    sessions.reload();
  }

  async function remove(s: Schemas["Session"]) {
    if (!confirm(`Stop the session "${s.name}" for good?`)) return;
    await act.run(() => must(api().DELETE("/api/sessions/{id}", { params: { path: { id: s.id } } })));
    sessions.reload();
  }

  return (
    <section>
      <h1>Sessions</h1>
      <form class="card" onSubmit={create} aria-labelledby="new-session">
        <h2 id="new-session">New session</h2>
        <label for="ses-name">Name</label>
        <input id="ses-name" value={name} required maxLength={100} onInput={(e) => setName(e.currentTarget.value)} aria-describedby="ses-name-err" />
        <FieldError error={act.error} path="name" id="ses-name-err" />
        <fieldset>
          <legend>Network</legend>
          <label class="check">
            <input type="radio" name="network" value="sandbox" checked={network === "sandbox"} onChange={() => setNetwork("sandbox")} /> Sandbox (built in)
          </label>
          <label class="check">
            <input type="radio" name="network" value="whatsapp" checked={network === "whatsapp"} onChange={() => setNetwork("whatsapp")} /> WhatsApp Cloud API
          </label>
        </fieldset>
        {network === "whatsapp" &&
          (["phoneNumberId", "businessAccountId", "accessToken", "appSecret", "verifyToken"] as const).map((f) => (
            <div key={f}>
              <label for={`wa-${f}`}>{f}</label>
              <input
                id={`wa-${f}`}
                {...(f === "phoneNumberId" || f === "businessAccountId" || f === "verifyToken" ? { type: "text" as const } : { type: "password" as const })}
                autocomplete="off"
                required={f !== "businessAccountId"}
                value={wa[f]}
                onInput={(e) => setWa({ ...wa, [f]: e.currentTarget.value })}
              />
              <FieldError error={act.error} path={`whatsapp.${f}`} id={`wa-${f}-err`} />
            </div>
          ))}
        <button type="submit" disabled={act.busy || !name.trim()}>
          Create session
        </button>
      </form>
      <DataTable caption="Sessions" columns={["Name", "Network", "Status", "Phone", "Created"]} actions error={act.error ?? sessions.error}>
        {sessions.data?.data.map((s) => (
          <tr key={s.id} data-session={s.id}>
            <td>
              <Link href={`/chat?session=${encodeURIComponent(s.id)}`}>{s.name}</Link>
            </td>
            <td>{s.network}</td>
            <td>
              <StatusBadge status={s.status} />
              {s.statusReason && <span class="muted"> {s.statusReason}</span>}
              {s.health && s.health.state !== "ok" && (
                <div class="session-health" data-testid="session-health" title={`${s.health.event}, ${when(s.health.at)}`}>
                  {healthText(s.health)}
                </div>
              )}
            </td>
            <td>{s.phoneNumber ?? "—"}</td>
            <td>{when(s.createdAt)}</td>
            <td class="actions">
              <button type="button" class="secondary" onClick={() => setTemplatesOf(templatesOf === s.id ? null : s.id)} aria-label={`Templates of ${s.name}`} aria-expanded={templatesOf === s.id}>
                Templates
              </button>
              {s.status !== "STOPPED" && (
                <>
                  <button type="button" class="secondary" onClick={() => void restart(s)} aria-label={`Restart ${s.name}`}>
                    Restart
                  </button>
                  <button type="button" class="danger" onClick={() => void remove(s)} aria-label={`Delete ${s.name}`}>
                    Delete
                  </button>
                </>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
      {templatesOf && sessions.data?.data.find((s) => s.id === templatesOf) && <SessionTemplates session={sessions.data.data.find((s) => s.id === templatesOf)!} />}
    </section>
  );
}
