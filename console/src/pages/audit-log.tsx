import './operations.css';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { Empty, Field, FormProblem, LoadError, Loading } from '../components/ui.js';
import { useAction, useLoad } from '../hooks.js';
import {
  type AuditFilters,
  type AuditView,
  auditQueryString,
  displayName,
  isoToLocal,
  localToIso,
  PAGE_SIZES,
  pageLabel,
  readAuditQuery,
} from '../lib/audit.js';
import { toProblem } from '../lib/problems.js';
import { useOrg } from '../session.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

export function AuditLog() {
  const o = useOrg();
  const { path, query, route } = useLocation();
  const view = readAuditQuery(query);
  const qs = auditQueryString(view);
  const log = useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/audit-log', {
          params: {
            path: { orgSlug: o.slug },
            query: { ...view.filters, limit: view.limit, offset: view.offset },
          },
        }),
      ),
    [o.slug, qs],
  );
  const names = new Map<string, string>(
    (o.members ?? []).map((m: Json) => [m.userId, displayName(m.user, m.userId)]),
  );
  const go = (v: AuditView) => route(`${path}${auditQueryString(v)}`);
  return (
    <>
      <hgroup>
        <h1>Audit log</h1>
        <p>Every change made in the organization, newest first.</p>
      </hgroup>
      <Filters
        key={qs}
        view={view}
        members={o.members ?? []}
        onApply={(filters) => go({ ...view, filters, offset: 0 })}
      />
      <Export filters={view.filters} />
      {log.loading && !log.data && <Loading what="the audit log" />}
      {log.error && <LoadError problem={log.error} />}
      {log.data &&
        (log.data.items.length === 0 ? (
          <Empty>No entries match.</Empty>
        ) : (
          <>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Actor</th>
                    <th scope="col">Action</th>
                    <th scope="col">Resource</th>
                    <th scope="col">Metadata</th>
                  </tr>
                </thead>
                <tbody>
                  {log.data.items.map((e: Json) => (
                    <tr key={e.id}>
                      <td>
                        <time dateTime={e.timestamp}>{new Date(e.timestamp).toLocaleString()}</time>
                      </td>
                      <td>
                        {e.actorUserId === null ? (
                          <em>System</em>
                        ) : (
                          <span title={e.actorUserId}>{names.get(e.actorUserId) ?? e.actorUserId}</span>
                        )}
                      </td>
                      <td>
                        <code>{e.action}</code>
                      </td>
                      <td>
                        {e.resourceType} <code class="break">{e.resourceId}</code>
                      </td>
                      <td>
                        {e.metadata ? (
                          <details>
                            <summary>Show</summary>
                            <pre>
                              <code>{JSON.stringify(e.metadata, null, 2)}</code>
                            </pre>
                          </details>
                        ) : (
                          '—'
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <nav aria-label="Audit log pages" class="pager">
              <button
                type="button"
                class="secondary"
                disabled={view.offset === 0}
                onClick={() => go({ ...view, offset: Math.max(0, view.offset - view.limit) })}
              >
                Newer
              </button>
              <span>{pageLabel(view.offset, log.data.items.length, log.data.total)}</span>
              <button
                type="button"
                class="secondary"
                disabled={view.offset + log.data.items.length >= log.data.total}
                onClick={() => go({ ...view, offset: view.offset + view.limit })}
              >
                Older
              </button>
              <label>
                <span class="visually-hidden">Entries per page</span>
                <select
                  aria-label="Entries per page"
                  value={view.limit}
                  onChange={(e) =>
                    go({ ...view, offset: 0, limit: Number((e.target as HTMLSelectElement).value) })
                  }
                >
                  {PAGE_SIZES.map((n) => (
                    <option key={n} value={n}>
                      {n} per page
                    </option>
                  ))}
                </select>
              </label>
            </nav>
          </>
        ))}
    </>
  );
}

function Filters({
  view,
  members,
  onApply,
}: {
  view: AuditView;
  members: Json[];
  onApply: (f: AuditFilters) => void;
}) {
  const [f, setF] = useState<AuditFilters>(view.filters);
  const text = (k: keyof AuditFilters) => (e: Event) =>
    setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  const time = (k: 'since' | 'until') => (e: Event) =>
    setF({ ...f, [k]: localToIso((e.target as HTMLInputElement).value) });
  const knownActor = !f.actorUserId || members.some((m) => m.userId === f.actorUserId);
  return (
    <form
      class="filters"
      aria-label="Filter the audit log"
      onSubmit={(e) => {
        e.preventDefault();
        const clean: AuditFilters = {};
        for (const [k, v] of Object.entries(f)) if (v?.trim()) clean[k as keyof AuditFilters] = v.trim();
        onApply(clean);
      }}
    >
      <Field
        label="Action"
        name="action"
        placeholder="webhook.created"
        value={f.action ?? ''}
        onInput={text('action')}
      />
      <label>
        Actor
        <select
          name="actorUserId"
          value={f.actorUserId ?? ''}
          onChange={(e) => setF({ ...f, actorUserId: (e.target as HTMLSelectElement).value || undefined })}
        >
          <option value="">Anyone</option>
          {!knownActor && <option value={f.actorUserId}>{f.actorUserId}</option>}
          {members.map((m) => (
            <option key={m.userId} value={m.userId}>
              {displayName(m.user, m.userId)}
            </option>
          ))}
        </select>
      </label>
      <Field
        label="Resource type"
        name="resourceType"
        placeholder="webhook"
        value={f.resourceType ?? ''}
        onInput={text('resourceType')}
      />
      <Field label="Resource id" name="resourceId" value={f.resourceId ?? ''} onInput={text('resourceId')} />
      <Field
        label="From"
        name="since"
        type="datetime-local"
        value={isoToLocal(f.since)}
        onInput={time('since')}
      />
      <Field
        label="Until"
        name="until"
        type="datetime-local"
        value={isoToLocal(f.until)}
        onInput={time('until')}
      />
      <div class="actions">
        <button type="submit">Apply filters</button>
        <button
          type="button"
          class="secondary outline"
          onClick={() => {
            setF({});
            onApply({});
          }}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}

/** Downloads the filtered entries (the server streams them; the browser saves the file). */
function Export({ filters }: { filters: AuditFilters }) {
  const o = useOrg();
  const exporting = useAction();
  const [done, setDone] = useState('');
  const run = (format: 'csv' | 'json') =>
    exporting.run(async () => {
      setDone('');
      const r = await api.GET('/identity/organizations/{orgSlug}/audit-log/export', {
        params: { path: { orgSlug: o.slug }, query: { ...filters, format } },
        parseAs: 'blob',
      });
      if (!r.response.ok)
        throw toProblem(
          r.response.status,
          await r.response
            .clone()
            .json()
            .catch(() => null),
        );
      const name =
        /filename="([^"]+)"/.exec(r.response.headers.get('content-disposition') ?? '')?.[1] ??
        `audit-log.${format}`;
      const url = URL.createObjectURL(r.data as Blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setDone(`Exported ${name}.`);
    });
  return (
    <div class="actions export">
      <span>Export the filtered entries:</span>
      <button
        type="button"
        class="secondary"
        aria-busy={exporting.busy || undefined}
        onClick={() => void run('csv')}
      >
        Export CSV
      </button>
      <button
        type="button"
        class="secondary"
        aria-busy={exporting.busy || undefined}
        onClick={() => void run('json')}
      >
        Export JSON
      </button>
      {done && <span role="status">{done}</span>}
      <FormProblem problem={exporting.problem} />
    </div>
  );
}
