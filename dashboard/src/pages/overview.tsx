import { useEffect, useState } from "preact/hooks";
import { api, currentRate, must, onRateChange, type Schemas } from "../api.ts";
import { DataTable, ErrorBox, SecretOnce, useAction, useLoad, when } from "../ui.tsx";

function RateLimit() {
  const [rate, setRate] = useState(currentRate());
  useEffect(() => onRateChange(() => setRate(currentRate())), []);
  if (!rate) return <p>Rate limit: not known yet.</p>;
  const pct = rate.limit > 0 ? Math.round((rate.remaining / rate.limit) * 100) : 0;
  return (
    <div>
      <p data-testid="rate">
        {rate.remaining} of {rate.limit} requests left this minute
      </p>
      <progress max={rate.limit} value={rate.remaining} aria-label={`Requests left: ${pct} %`} />
    </div>
  );
}

export function Overview() {
  const account = useLoad(() => must(api().GET("/api/account")));
  const keys = useLoad(() => must(api().GET("/api/keys", { params: { query: { limit: 100 } } })));
  const [name, setName] = useState("");
  const [created, setCreated] = useState<Schemas["CreatedApiKey"] | null>(null);
  const act = useAction();
  const a = account.data;

  async function create(e: Event) {
    e.preventDefault();
    const k = await act.run(() => must(api().POST("/api/keys", { body: { name } })));
    if (k) {
      setCreated(k);
      setName("");
      keys.reload();
    }
  }

  async function revoke(k: Schemas["ApiKey"]) {
    if (!confirm(`Revoke the key "${k.name}" (${k.prefix}…)? Programs using it stop working.`)) return;
    await act.run(() => must(api().DELETE("/api/keys/{id}", { params: { path: { id: k.id } } })));
    keys.reload();
  }

  return (
    <section>
      <h1>Overview</h1>
      <ErrorBox error={account.error} />
      {a && (
        <dl class="facts">
          <dt>Account</dt>
          <dd data-testid="account-name">{a.name}</dd>
          <dt>Account id</dt>
          <dd>
            <code>{a.id}</code>
          </dd>
          <dt>Plan</dt>
          <dd data-testid="plan">{a.plan}</dd>
          <dt>Limit</dt>
          <dd>{a.rateLimitPerMinute} requests / minute</dd>
        </dl>
      )}
      <RateLimit />

      <h2>API keys</h2>
      {created && <SecretOnce label={`New key "${created.name}"`} value={created.key} onDone={() => setCreated(null)} />}
      <form class="inline" onSubmit={create}>
        <label for="key-name">Name</label>
        <input id="key-name" value={name} required maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" disabled={act.busy || !name.trim()}>
          Create key
        </button>
      </form>
      <DataTable caption="API keys" columns={["Name", "Prefix", "Created", "State"]} actions error={act.error ?? keys.error}>
        {keys.data?.data.map((k) => (
          <tr key={k.id}>
            <td>{k.name}</td>
            <td>
              <code>{k.prefix}…</code>
            </td>
            <td>{when(k.createdAt)}</td>
            <td>{k.revokedAt ? `revoked ${when(k.revokedAt)}` : "active"}</td>
            <td>
              {!k.revokedAt && (
                <button type="button" class="danger" onClick={() => void revoke(k)} aria-label={`Revoke key ${k.name}`}>
                  Revoke
                </button>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}
