import { useEffect, useRef, useState } from "preact/hooks";
import { api, must, type Schemas } from "../api.ts";
import { DataTable, ErrorBox, FieldError, SecretOnce, StatusBadge, useAction, useEvents, useLoad, when } from "../ui.tsx";
import { EVENT_TYPES, type EventType } from "../../../src/events/types.ts";

function Deliveries({ webhookId }: { webhookId: string }) {
  const log = useLoad(() => must(api().GET("/api/webhooks/{id}/deliveries", { params: { path: { id: webhookId }, query: { limit: 50 } } })), [webhookId]);
  const act = useAction();
  const [test, setTest] = useState<Schemas["WebhookTestResult"] | null>(null);
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  // Each live event is followed by its deliveries: refresh the log shortly after one arrives.
  useEvents(() => {
    if (pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = undefined;
      log.reload();
    }, 1000);
  }, [webhookId]);
  useEffect(() => () => clearTimeout(pending.current), []);

  async function sendTest() {
    const r = await act.run(() => must(api().POST("/api/webhooks/{id}/test", { params: { path: { id: webhookId } } })));
    if (r) {
      setTest(r);
      log.reload();
    }
  }

  async function retry(d: Schemas["WebhookDelivery"]) {
    const path = { params: { path: { id: webhookId, deliveryId: d.id } } };
    const ok = await act.run(() => must(api().POST("/api/webhooks/{id}/deliveries/{deliveryId}/retry", path)));
    log.reload();
    if (!ok) return;
    // The attempt runs on the delivery queue and no stream event announces it: look at this one
    // delivery a few times (bounded, backing off) until its new attempt is there.
    for (let i = 1; i <= 8; i++) {
      await new Promise((r) => setTimeout(r, 250 * i));
      const now = await must(api().GET("/api/webhooks/{id}/deliveries/{deliveryId}", path)).catch(() => null);
      if (now && now.attemptCount > d.attemptCount) break;
    }
    log.reload();
  }

  return (
    <div class="card">
      <div class="row wrap">
        <button type="button" onClick={() => void sendTest()} disabled={act.busy}>
          Send test
        </button>
        <button type="button" class="secondary" onClick={log.reload}>
          Refresh log
        </button>
      </div>
      {test && (
        <p role="status" class={test.success ? "ok" : "error"}>
          Test {test.success ? "delivered" : "failed"}: {test.statusCode ?? "no answer"} in {test.durationMs} ms{test.error ? ` — ${test.error}` : ""}
        </p>
      )}
      <ErrorBox error={act.error ?? log.error} />
      <h3>Delivery log</h3>
      <ol class="deliveries" data-testid="deliveries">
        {log.data?.data.map((d) => (
          <li key={d.id} class="card" data-delivery={d.id}>
            <div class="row wrap">
              <code>{d.eventType}</code> <StatusBadge status={d.status} />
              <span class="muted">
                {d.attemptCount} attempt(s) · {when(d.createdAt)}
                {d.nextAttemptAt ? ` · next ${when(d.nextAttemptAt)}` : ""}
              </span>
              {d.status !== "pending" && (
                <button type="button" class="secondary" onClick={() => void retry(d)} aria-label={`Retry delivery ${d.id}`}>
                  Retry
                </button>
              )}
            </div>
            <ul class="attempts">
              {d.attempts.map((a) => (
                <li key={a.attempt}>
                  #{a.attempt}: {a.statusCode ?? "no response"} in {a.durationMs} ms {a.error ? `— ${a.error}` : ""} <span class="muted">{when(a.createdAt)}</span>
                  {a.responseBody && <pre class="body">{a.responseBody}</pre>}
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ol>
      {log.data && log.data.data.length === 0 && <p>No deliveries yet.</p>}
    </div>
  );
}

const WHY_DISABLED: Record<"gone" | "failing", string> = {
  gone: "it answered 410 Gone",
  failing: "its deliveries failed continuously for days",
};

/** Endpoints the platform disabled: what happened and what to do (the state column alone is easy to miss). */
function DisabledBanner({ hooks, onEnable }: { hooks: Schemas["Webhook"][]; onEnable: (w: Schemas["Webhook"]) => void }) {
  const off = hooks.filter((w) => !w.enabled && w.disabledReason);
  if (off.length === 0) return null;
  return (
    <div class="error" role="alert" data-testid="webhook-disabled-banner">
      {off.map((w) => (
        <p key={w.id}>
          The webhook to <strong>{w.url}</strong> was disabled: {WHY_DISABLED[w.disabledReason!]}. Fix the endpoint, enable it, then send what
          it missed with <code>POST /api/webhooks/{w.id}/recover</code>.{" "}
          <button type="button" class="secondary" onClick={() => onEnable(w)}>
            Enable
          </button>
        </p>
      ))}
    </div>
  );
}

export function Webhooks() {
  const list = useLoad(() => must(api().GET("/api/webhooks", { params: { query: { limit: 100 } } })));
  // a disabling announced on the live stream shows at once
  useEvents((e) => {
    if (e.type === "webhook.disabled") list.reload();
  });
  // the catalog says what each type means; until it loads, the types alone
  const catalog = useLoad(() => must(api().GET("/api/event-types")));
  const described = new Map((catalog.data?.data ?? []).map((t) => [t.type, t.description]));
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  // empty = no limit; the API checks the bounds (1-1000) and answers a field error
  const [maxPerSecond, setMaxPerSecond] = useState("");
  const [events, setEvents] = useState<Set<EventType>>(new Set(["message.received"]));
  const [secret, setSecret] = useState<string | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const act = useAction();

  async function create(e: Event) {
    e.preventDefault();
    const rate = maxPerSecond.trim() === "" ? {} : { maxPerSecond: Number(maxPerSecond) };
    const w = await act.run(() => must(api().POST("/api/webhooks", { body: { url, events: [...events], ...(description ? { description } : {}), ...rate } })));
    if (w) {
      setSecret(w.secret);
      setUrl("");
      setMaxPerSecond("");
      setSelected(w.id);
      list.reload();
    }
  }

  async function toggle(w: Schemas["Webhook"]) {
    await act.run(() => must(api().PUT("/api/webhooks/{id}", { params: { path: { id: w.id } }, body: { enabled: !w.enabled } })));
    list.reload();
  }

  async function remove(w: Schemas["Webhook"]) {
    if (!confirm(`Delete the webhook to ${w.url} and its delivery log?`)) return;
    await act.run(() => must(api().DELETE("/api/webhooks/{id}", { params: { path: { id: w.id } } })));
    if (selected === w.id) setSelected(null);
    list.reload();
  }

  return (
    <section>
      <h1>Webhooks</h1>
      <DisabledBanner hooks={list.data?.data ?? []} onEnable={(w) => void toggle(w)} />
      {secret && <SecretOnce label="Signing secret" value={secret} onDone={() => setSecret(null)} />}
      <form class="card stack" onSubmit={create} aria-labelledby="new-webhook">
        <h2 id="new-webhook">New webhook</h2>
        <label for="wh-url">URL</label>
        <input id="wh-url" type="url" required value={url} placeholder="https://example.com/hooks" onInput={(e) => setUrl(e.currentTarget.value)} aria-describedby="wh-url-err" />
        <FieldError error={act.error} path="url" id="wh-url-err" />
        <label for="wh-desc">Description (optional)</label>
        <input id="wh-desc" value={description} maxLength={200} onInput={(e) => setDescription(e.currentTarget.value)} />
        <label for="wh-rate">Most deliveries per second (optional, 1-1000)</label>
        <input
          id="wh-rate"
          type="number"
          min={1}
          max={1000}
          step={1}
          value={maxPerSecond}
          placeholder="no limit"
          onInput={(e) => setMaxPerSecond(e.currentTarget.value)}
          aria-describedby="wh-rate-err"
        />
        <FieldError error={act.error} path="maxPerSecond" id="wh-rate-err" />
        <fieldset>
          <legend>Events</legend>
          <div class="checks">
            {EVENT_TYPES.map((t) => (
              <label key={t} class="check" title={described.get(t)}>
                <input
                  type="checkbox"
                  checked={events.has(t)}
                  onChange={(e) => {
                    const next = new Set(events);
                    if (e.currentTarget.checked) next.add(t);
                    else next.delete(t);
                    setEvents(next);
                  }}
                />{" "}
                {t}
                {described.get(t) && <small class="muted"> {described.get(t)}</small>}
              </label>
            ))}
          </div>
          <FieldError error={act.error} path="events" id="wh-events-err" />
        </fieldset>
        <button type="submit" disabled={act.busy || events.size === 0 || !url}>
          Create webhook
        </button>
      </form>
      <DataTable caption="Webhooks" columns={["URL", "Events", "Rate", "State"]} actions error={act.error ?? list.error}>
        {list.data?.data.map((w) => (
          <tr key={w.id} aria-selected={w.id === selected}>
            <td>
              <button type="button" class="link" onClick={() => setSelected(w.id)}>
                {w.url}
              </button>
              {w.description && <div class="muted">{w.description}</div>}
            </td>
            <td>{w.events.join(", ")}</td>
            <td>{w.maxPerSecond === null ? "no limit" : `${w.maxPerSecond}/s`}</td>
            <td>{w.enabled ? "enabled" : `disabled${w.disabledReason ? `: ${w.disabledReason}` : ""}`}</td>
            <td class="actions">
              <button type="button" class="secondary" onClick={() => void toggle(w)}>
                {w.enabled ? "Disable" : "Enable"}
              </button>
              <button type="button" class="danger" onClick={() => void remove(w)} aria-label={`Delete webhook ${w.url}`}>
                Delete
              </button>
            </td>
          </tr>
        ))}
      </DataTable>
      {selected && <Deliveries key={selected} webhookId={selected} />}
    </section>
  );
}
