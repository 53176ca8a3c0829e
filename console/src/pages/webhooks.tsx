import './operations.css';
import { useLocation, useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import {
  Confirm,
  CopyButton,
  Empty,
  Field,
  FormProblem,
  GuardedButton,
  LoadError,
  Loading,
} from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import { choiceOf, eventsOf, type EventType, receiverSnippet, STATUS_LABELS } from '../lib/webhooks.js';
import { localToIso } from '../lib/audit.js';
import { useOrg } from '../session.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

const when = (iso?: string) => (iso ? new Date(iso).toLocaleString() : '—');

function useCatalog(orgSlug: string) {
  return useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/webhooks/event-types', { params: { path: { orgSlug } } }),
      ),
    [orgSlug],
  );
}

/** The secret, shown once, with the receiver snippet that uses it. */
function SecretOnce({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <article class="secret" aria-labelledby="secret-title">
      <h2 id="secret-title">Signing secret</h2>
      <p>
        <strong>Save it now: this is the only time it is shown.</strong> Your receiver checks each delivery's
        signature with it.
      </p>
      <p>
        <code data-testid="webhook-secret" class="break">
          {secret}
        </code>
      </p>
      <div class="actions">
        <CopyButton text={secret} label="Copy secret" />
        <button type="button" class="secondary" onClick={onDone}>
          I have saved the secret
        </button>
      </div>
    </article>
  );
}

/** Picks the events: everything (`*`) or a list, and the high-volume events only when asked for. */
function EventPicker({
  catalog,
  all,
  chosen,
  onChange,
}: {
  catalog: EventType[];
  all: boolean;
  chosen: Set<string>;
  onChange: (all: boolean, chosen: Set<string>) => void;
}) {
  const regular = catalog.filter((e) => e.inWildcard);
  const optIn = catalog.filter((e) => !e.inWildcard);
  const box = (e: EventType, disabled: boolean) => (
    <label key={e.type}>
      <input
        type="checkbox"
        name="events"
        value={e.type}
        checked={disabled || chosen.has(e.type)}
        disabled={disabled}
        onChange={(ev) => {
          const next = new Set(chosen);
          if ((ev.target as HTMLInputElement).checked) next.add(e.type);
          else next.delete(e.type);
          onChange(all, next);
        }}
      />
      <code>{e.type}</code> <small>{e.description}</small>
    </label>
  );
  return (
    <>
      <fieldset>
        <legend>Events</legend>
        <label>
          <input
            type="checkbox"
            checked={all}
            onChange={(e) => onChange((e.target as HTMLInputElement).checked, chosen)}
          />
          All events (<code>*</code>)
        </label>
        <small>
          <code>*</code> also receives events added to the catalog later, except the high-volume ones below.
        </small>
        <div class="event-list">{regular.map((e) => box(e, all))}</div>
      </fieldset>
      <fieldset>
        <legend>High-volume events (opt-in)</legend>
        <small>
          Sent on every token issued or refreshed; <code>*</code> does not include them. Name them to receive
          them.
        </small>
        <div class="event-list">{optIn.map((e) => box(e, false))}</div>
      </fieldset>
    </>
  );
}

export function Webhooks() {
  const o = useOrg();
  const { route } = useLocation();
  const path = { orgSlug: o.slug };
  const hooks = useLoad(
    () => unwrap(api.GET('/identity/organizations/{orgSlug}/webhooks', { params: { path } })),
    [o.slug],
  );
  const catalog = useCatalog(o.slug);
  const deny = o.deny('org.webhooks.edit');
  const [url, setUrl] = useState('');
  const [all, setAll] = useState(true);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [created, setCreated] = useState<{ id: string; secret: string }>();
  const create = useAction();
  const events = eventsOf({ all, chosen }, (catalog.data?.items ?? []) as EventType[]);
  return (
    <>
      <hgroup>
        <h1>Webhooks</h1>
        <p>Signed HTTPS deliveries of the organization's events, retried for about six minutes.</p>
      </hgroup>
      {created && (
        <SecretOnce
          secret={created.secret}
          onDone={() => route(`/console/orgs/${o.slug}/webhooks/${created.id}`)}
        />
      )}
      {hooks.loading && !hooks.data && <Loading what="webhooks" />}
      {hooks.error && <LoadError problem={hooks.error} />}
      {hooks.data &&
        (hooks.data.items.length === 0 ? (
          <Empty>No webhooks yet.</Empty>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {hooks.data.items.map((w: Json) => (
                  <tr key={w.id}>
                    <th scope="row">
                      <a href={`/console/orgs/${o.slug}/webhooks/${w.id}`} class="break">
                        {w.url}
                      </a>
                    </th>
                    <td>{w.events.join(', ')}</td>
                    <td>
                      {w.enabled
                        ? 'Enabled'
                        : w.disabledAt
                          ? `Disabled after ${w.consecutiveFailures} failures`
                          : 'Disabled'}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      <h2>Add a webhook</h2>
      {catalog.error && <LoadError problem={catalog.error} />}
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const w = await create.run(() =>
            unwrap(
              api.POST('/identity/organizations/{orgSlug}/webhooks', {
                params: { path },
                body: { url, events },
              }),
            ),
          );
          if (w) {
            setCreated({ id: w.id, secret: w.secret });
            setUrl('');
            await hooks.reload();
            window.scrollTo(0, 0);
          }
        }}
      >
        <fieldset disabled={Boolean(deny)}>
          <Field
            label="Endpoint URL"
            name="url"
            type="url"
            required
            placeholder="https://example.com/webhooks/gatehouse"
            hint="HTTPS only. Answer 2xx within 10 seconds."
            value={url}
            problem={create.problem}
            onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
          />
          {catalog.data && (
            <EventPicker
              catalog={catalog.data.items}
              all={all}
              chosen={chosen}
              onChange={(a, c) => {
                setAll(a);
                setChosen(c);
              }}
            />
          )}
          {create.problem?.fields.events && (
            <p class="form-error" role="alert">
              {create.problem.fields.events}
            </p>
          )}
        </fieldset>
        <FormProblem problem={create.problem} />
        <GuardedButton
          type="submit"
          denied={deny}
          disabled={!url || events.length === 0 || create.busy}
          aria-busy={create.busy || undefined}
        >
          Add webhook
        </GuardedButton>
      </form>
      <ReceiverSnippet />
    </>
  );
}

function ReceiverSnippet() {
  const code = receiverSnippet();
  return (
    <section>
      <h2>Receive deliveries</h2>
      <p>
        Every delivery carries the Standard Webhooks headers (<code>webhook-id</code>,{' '}
        <code>webhook-timestamp</code>, <code>webhook-signature</code>), so the <code>standardwebhooks</code>{' '}
        library verifies it. The secret is <code>whsec_</code> followed by 32 random bytes in base64, the
        format the library takes as it is. Deliveries also carry <code>Service-Signature</code>: hex
        HMAC-SHA256 of the raw body, keyed with those 32 bytes.
      </p>
      <pre>
        <code>{code}</code>
      </pre>
      <CopyButton text={code} label="Copy example" />
    </section>
  );
}

export function WebhookDetail() {
  const o = useOrg();
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params.id as string;
  const path = { orgSlug: o.slug, id };
  const hook = useLoad(
    () => unwrap(api.GET('/identity/organizations/{orgSlug}/webhooks/{id}', { params: { path } })),
    [o.slug, id],
  );
  const deny = o.deny('org.webhooks.edit');
  const [secret, setSecret] = useState<string>();
  const [confirm, setConfirm] = useState<'rotate' | 'delete' | null>(null);
  const [logVersion, setLogVersion] = useState(0);
  const [tested, setTested] = useState<Json>();
  const rotate = useAction();
  const del = useAction();
  const toggle = useAction();
  const test = useAction();
  if (hook.loading && !hook.data) return <Loading what="the webhook" />;
  if (hook.error) return <LoadError problem={hook.error} />;
  const w = hook.data as Json;
  const setEnabled = async (enabled: boolean) => {
    const ok = await toggle.run(() =>
      unwrap(
        api.PATCH('/identity/organizations/{orgSlug}/webhooks/{id}', { params: { path }, body: { enabled } }),
      ),
    );
    if (ok) await hook.reload();
  };
  return (
    <>
      <nav aria-label="Breadcrumb">
        <ul>
          <li>
            <a href={`/console/orgs/${o.slug}/webhooks`}>Webhooks</a>
          </li>
          <li>
            <span aria-current="page">{w.id}</span>
          </li>
        </ul>
      </nav>
      <h1 class="break">{w.url}</h1>
      <p>
        Events: <code>{w.events.join(', ')}</code> · last delivered {when(w.lastDeliveredAt)}
      </p>
      {secret && <SecretOnce secret={secret} onDone={() => setSecret(undefined)} />}
      {!w.enabled && w.disabledAt ? (
        <DisabledNotice hook={w} deny={deny} busy={toggle.busy} onEnable={() => void setEnabled(true)} />
      ) : (
        <p>
          {w.enabled ? 'Enabled' : 'Disabled'} · {w.consecutiveFailures} consecutive failed deliveries
        </p>
      )}
      <FormProblem problem={toggle.problem} />
      <div class="actions">
        <GuardedButton
          type="button"
          denied={deny}
          aria-busy={test.busy || undefined}
          onClick={async () => {
            const r = await test.run(() =>
              unwrap(api.POST('/identity/organizations/{orgSlug}/webhooks/{id}/test', { params: { path } })),
            );
            if (r) {
              setTested(r.delivery);
              setLogVersion((n) => n + 1);
              await hook.reload();
            }
          }}
        >
          Send test event
        </GuardedButton>
        {w.enabled ? (
          <GuardedButton type="button" class="secondary" denied={deny} onClick={() => void setEnabled(false)}>
            Disable webhook
          </GuardedButton>
        ) : (
          !w.disabledAt && (
            <GuardedButton
              type="button"
              class="secondary"
              denied={deny}
              onClick={() => void setEnabled(true)}
            >
              Enable webhook
            </GuardedButton>
          )
        )}
        <GuardedButton type="button" class="secondary" denied={deny} onClick={() => setConfirm('rotate')}>
          Rotate secret
        </GuardedButton>
        <GuardedButton
          type="button"
          class="secondary outline"
          denied={deny}
          onClick={() => setConfirm('delete')}
        >
          Delete webhook
        </GuardedButton>
      </div>
      <FormProblem problem={test.problem} />
      {tested && (
        <p role="status">
          Test delivery {tested.id}: {STATUS_LABELS[tested.status] ?? tested.status}
          {tested.responseCode ? ` (HTTP ${tested.responseCode})` : ''}.
        </p>
      )}
      <Confirm
        open={confirm === 'rotate'}
        title="Rotate the signing secret?"
        confirmLabel="Rotate secret"
        busy={rotate.busy}
        problem={rotate.problem}
        onCancel={() => setConfirm(null)}
        onConfirm={async () => {
          const r = await rotate.run(() =>
            unwrap(
              api.POST('/identity/organizations/{orgSlug}/webhooks/{id}/rotate-secret', { params: { path } }),
            ),
          );
          if (r) {
            setConfirm(null);
            setSecret(r.secret);
          }
        }}
      >
        <p>
          The old secret stops signing at once: deploy the new one to your receiver (accept both for a few
          minutes).
        </p>
      </Confirm>
      <Confirm
        open={confirm === 'delete'}
        title="Delete this webhook?"
        confirmLabel="Delete webhook"
        busy={del.busy}
        problem={del.problem}
        onCancel={() => setConfirm(null)}
        onConfirm={async () => {
          const ok = await del.run(async () => {
            await unwrap(api.DELETE('/identity/organizations/{orgSlug}/webhooks/{id}', { params: { path } }));
            return true;
          });
          if (ok) route(`/console/orgs/${o.slug}/webhooks`);
        }}
      >
        <p>Deliveries stop, and its delivery log goes with it.</p>
      </Confirm>
      <EditWebhook key={w.updatedAt} hook={w} deny={deny} onSaved={hook.reload} />
      <DeliveryLog key={logVersion} hookId={id} deny={deny} />
    </>
  );
}

/** The URL and the events, with the same picker as at creation. */
function EditWebhook({
  hook,
  deny,
  onSaved,
}: {
  hook: Json;
  deny: string | null;
  onSaved: () => Promise<void>;
}) {
  const o = useOrg();
  const catalog = useCatalog(o.slug);
  const initial = choiceOf(hook.events);
  const [url, setUrl] = useState<string>(hook.url);
  const [all, setAll] = useState(initial.all);
  const [chosen, setChosen] = useState(initial.chosen);
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const events = eventsOf({ all, chosen }, (catalog.data?.items ?? []) as EventType[]);
  return (
    <details>
      <summary>Edit URL and events</summary>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setSaved(false);
          const ok = await save.run(() =>
            unwrap(
              api.PATCH('/identity/organizations/{orgSlug}/webhooks/{id}', {
                params: { path: { orgSlug: o.slug, id: hook.id } },
                body: { url, events },
              }),
            ),
          );
          if (ok) {
            setSaved(true);
            await onSaved();
          }
        }}
      >
        <fieldset disabled={Boolean(deny)}>
          <Field
            label="Endpoint URL"
            name="url"
            type="url"
            required
            value={url}
            problem={save.problem}
            onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
          />
          {catalog.data && (
            <EventPicker
              catalog={catalog.data.items}
              all={all}
              chosen={chosen}
              onChange={(a, c) => {
                setAll(a);
                setChosen(c);
              }}
            />
          )}
        </fieldset>
        <FormProblem problem={save.problem} />
        <GuardedButton type="submit" denied={deny} disabled={!url || events.length === 0}>
          Save webhook
        </GuardedButton>
        {saved && <p role="status">Saved.</p>}
      </form>
    </details>
  );
}

/** Why the webhook stopped, its last failures, and the one action that starts it again. */
function DisabledNotice({
  hook,
  deny,
  busy,
  onEnable,
}: {
  hook: Json;
  deny: string | null;
  busy: boolean;
  onEnable: () => void;
}) {
  const o = useOrg();
  const failures = useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/webhooks/{id}/deliveries', {
          params: {
            path: { orgSlug: o.slug, id: hook.id },
            query: { status: 'failed', limit: 5, offset: 0 },
          },
        }),
      ),
    [o.slug, hook.id, hook.disabledAt],
  );
  return (
    <article class="notice" aria-labelledby="disabled-title">
      <h2 id="disabled-title">Disabled automatically</h2>
      <p>
        Deliveries stopped on {when(hook.disabledAt)} after {hook.consecutiveFailures} consecutive failed
        deliveries. Fix the receiver, then re-enable: the failure count starts again at 0.
      </p>
      {failures.data && failures.data.items.length > 0 && (
        <>
          <h3>Last failures</h3>
          <ul>
            {failures.data.items.map((d: Json) => (
              <li key={d.id}>
                <code>{d.event}</code> queued {when(d.queuedAt)}, {d.attemptCount} attempts:{' '}
                {STATUS_LABELS[d.status] ?? d.status}
                {d.responseCode ? ` (HTTP ${d.responseCode})` : ''}
                {d.responseBodyExcerpt ? ` “${d.responseBodyExcerpt.slice(0, 80)}”` : ''}
              </li>
            ))}
          </ul>
        </>
      )}
      <GuardedButton type="button" denied={deny} aria-busy={busy || undefined} onClick={onEnable}>
        Re-enable webhook
      </GuardedButton>
    </article>
  );
}

interface LogFilter {
  status: string;
  event: string;
  since: string;
  until: string;
}

const PAGE = 20;

function DeliveryLog({ hookId, deny }: { hookId: string; deny: string | null }) {
  const o = useOrg();
  const catalog = useCatalog(o.slug);
  const [draft, setDraft] = useState<LogFilter>({ status: '', event: '', since: '', until: '' });
  const [filter, setFilter] = useState<LogFilter>(draft);
  const [offset, setOffset] = useState(0);
  const path = { orgSlug: o.slug, id: hookId };
  const log = useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/webhooks/{id}/deliveries', {
          params: {
            path,
            query: {
              limit: PAGE,
              offset,
              ...(filter.status ? { status: filter.status as 'failed' } : {}),
              ...(filter.event ? { event: filter.event } : {}),
              ...(localToIso(filter.since) ? { since: localToIso(filter.since) } : {}),
              ...(localToIso(filter.until) ? { until: localToIso(filter.until) } : {}),
            },
          },
        }),
      ),
    [o.slug, hookId, filter, offset],
  );
  const set = (k: keyof LogFilter) => (e: Event) =>
    setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value });
  return (
    <section>
      <h2>Delivery log</h2>
      <form
        class="filters"
        aria-label="Filter deliveries"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setFilter(draft);
        }}
      >
        <label>
          Status
          <select name="status" value={draft.status} onChange={set('status')}>
            <option value="">Any status</option>
            <option value="failed">Any failure</option>
            {Object.entries(STATUS_LABELS).map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <label>
          Event
          <select name="event" value={draft.event} onChange={set('event')}>
            <option value="">Any event</option>
            {(catalog.data?.items ?? []).map((e: Json) => (
              <option key={e.type} value={e.type}>
                {e.type}
              </option>
            ))}
          </select>
        </label>
        <Field label="From" name="since" type="datetime-local" value={draft.since} onInput={set('since')} />
        <Field label="Until" name="until" type="datetime-local" value={draft.until} onInput={set('until')} />
        <button type="submit" class="secondary">
          Filter deliveries
        </button>
      </form>
      {log.loading && !log.data && <Loading what="deliveries" />}
      {log.error && <LoadError problem={log.error} />}
      {log.data &&
        (log.data.items.length === 0 ? (
          <Empty>No deliveries match.</Empty>
        ) : (
          <>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Queued</th>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Details</th>
                  </tr>
                </thead>
                <tbody>
                  {log.data.items.map((d: Json) => (
                    <DeliveryRow key={d.id} d={d} hookId={hookId} deny={deny} onReplayed={log.reload} />
                  ))}
                </tbody>
              </table>
            </div>
            <Pager offset={offset} count={log.data.items.length} total={log.data.total} onMove={setOffset} />
          </>
        ))}
    </section>
  );
}

function Pager({
  offset,
  count,
  total,
  onMove,
}: {
  offset: number;
  count: number;
  total: number;
  onMove: (offset: number) => void;
}) {
  return (
    <nav aria-label="Delivery pages" class="pager">
      <button
        type="button"
        class="secondary"
        disabled={offset === 0}
        onClick={() => onMove(Math.max(0, offset - PAGE))}
      >
        Newer
      </button>
      <span>
        {offset + 1}–{offset + count} of {total}
      </span>
      <button
        type="button"
        class="secondary"
        disabled={offset + count >= total}
        onClick={() => onMove(offset + PAGE)}
      >
        Older
      </button>
    </nav>
  );
}

function DeliveryRow({
  d,
  hookId,
  deny,
  onReplayed,
}: {
  d: Json;
  hookId: string;
  deny: string | null;
  onReplayed: () => Promise<void>;
}) {
  const o = useOrg();
  const [open, setOpen] = useState(false);
  const path = { orgSlug: o.slug, id: hookId, deliveryId: d.id };
  const detail = useLoad(
    () =>
      open
        ? unwrap(
            api.GET('/identity/organizations/{orgSlug}/webhooks/{id}/deliveries/{deliveryId}', {
              params: { path },
            }),
          )
        : Promise.resolve(undefined),
    [open, d.id, d.status],
  );
  const replay = useAction();
  return (
    <>
      <tr>
        <td>{when(d.queuedAt)}</td>
        <td>
          <code>{d.event}</code>
        </td>
        <td>
          {STATUS_LABELS[d.status] ?? d.status}
          {d.responseCode ? ` (HTTP ${d.responseCode})` : ''}
        </td>
        <td>{d.attemptCount}</td>
        <td>
          <button type="button" class="secondary outline" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? 'Hide' : 'Show'}
            <span class="visually-hidden"> details of delivery {d.id}</span>
          </button>
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={5}>
            {detail.loading && !detail.data && <Loading what="the delivery" />}
            {detail.error && <LoadError problem={detail.error} />}
            {detail.data && (
              <div class="delivery-detail">
                <p>
                  Delivery <code>{d.id}</code>
                  {detail.data.replayOf && (
                    <>
                      {' '}
                      · replays <code>{detail.data.replayOf}</code>
                    </>
                  )}
                  {d.nextAttemptAt && ` · next attempt ${when(d.nextAttemptAt)}`}
                </p>
                <h4>Request headers</h4>
                <pre>
                  <code>
                    {Object.entries(detail.data.requestHeaders)
                      .map(([k, v]) => `${k}: ${v}`)
                      .join('\n')}
                    {`\n${detail.data.attemptHeaders.map((k: string) => `${k}: (computed at each attempt)`).join('\n')}`}
                  </code>
                </pre>
                <h4>Payload</h4>
                <pre>
                  <code>{JSON.stringify(detail.data.payload, null, 2)}</code>
                </pre>
                <h4>Response</h4>
                <p>
                  {d.responseCode ? `HTTP ${d.responseCode}` : 'No response'}
                  {d.responseBodyExcerpt ? ':' : '.'}
                </p>
                {d.responseBodyExcerpt && (
                  <pre>
                    <code>{d.responseBodyExcerpt}</code>
                  </pre>
                )}
                <GuardedButton
                  type="button"
                  class="secondary"
                  denied={deny}
                  aria-busy={replay.busy || undefined}
                  onClick={async () => {
                    const ok = await replay.run(() =>
                      unwrap(
                        api.POST(
                          '/identity/organizations/{orgSlug}/webhooks/{id}/deliveries/{deliveryId}/replay',
                          {
                            params: { path },
                          },
                        ),
                      ),
                    );
                    if (ok) await onReplayed();
                  }}
                >
                  Replay delivery
                </GuardedButton>
                <FormProblem problem={replay.problem} />
              </div>
            )}
          </td>
        </tr>
      )}
    </>
  );
}
