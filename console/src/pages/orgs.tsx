import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { Confirm, Empty, Field, FormProblem, GuardedButton } from '../components/ui.js';
import { ImageUpload } from '../components/upload.js';
import { useAction, useAvailability } from '../hooks.js';
import { slugFromName, slugProblem } from '../lib/slug.js';
import { useOrg, useSession } from '../session.js';

export function Home() {
  const { orgs } = useSession();
  return (
    <>
      <hgroup>
        <h1>Your organizations</h1>
        <p>An organization owns brands, apps and their sign-in settings.</p>
      </hgroup>
      {orgs.length === 0 ? (
        <Empty>You are not a member of any organization yet. Create one to get started.</Empty>
      ) : (
        <div class="cards">
          {orgs.map((o) => (
            <article key={o.slug}>
              <h2>
                <a href={`/console/orgs/${o.slug}`}>{o.name}</a>
              </h2>
              <p>
                <code>{o.slug}</code>
              </p>
              {o.description && <p>{o.description}</p>}
            </article>
          ))}
        </div>
      )}
      <p>
        <a href="/console/orgs/new" class="button-link">
          Create organization
        </a>
      </p>
    </>
  );
}

/** Create an org; the slug follows the name until edited, and its format is checked as you type. */
export function CreateOrg() {
  const { reloadOrgs } = useSession();
  const { route } = useLocation();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const [description, setDescription] = useState('');
  const action = useAction();
  const shownSlug = slugEdited ? slug : slugFromName(name);
  const slugFormat = shownSlug ? slugProblem(shownSlug) : null;
  const availability = useAvailability(shownSlug, Boolean(shownSlug) && !slugFormat, (s) =>
    unwrap(api.GET('/identity/organization-slug-availability', { params: { query: { slug: s } } })),
  );
  const slugError =
    slugFormat ??
    (availability && !availability.available
      ? availability.reason === 'reserved'
        ? `${shownSlug} belonged to a deleted organization and stays reserved for 90 days.`
        : `${shownSlug} is taken.`
      : null);
  return (
    <>
      <h1>Create an organization</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const org = await action.run(() =>
            unwrap(
              api.POST('/identity/organizations', {
                body: { name, slug: shownSlug, ...(description ? { description } : {}) },
              }),
            ),
          );
          if (org) {
            await reloadOrgs();
            route(`/console/orgs/${org.slug}`);
          }
        }}
      >
        <Field
          label="Name"
          name="name"
          required
          maxLength={80}
          value={name}
          problem={action.problem}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <Field
          label="Slug"
          name="slug"
          required
          value={shownSlug}
          hint={
            availability?.available
              ? `${shownSlug} is available.`
              : 'Lower-case letters, digits and dashes; 3 to 30 characters. It appears in URLs and cannot change.'
          }
          error={
            slugError ??
            action.problem?.fields.slug ??
            (action.problem?.status === 409 ? action.problem.message : null)
          }
          onInput={(e) => {
            setSlugEdited(true);
            setSlug((e.target as HTMLInputElement).value);
          }}
        />
        <Field
          label="Description (optional)"
          name="description"
          multiline
          maxLength={500}
          value={description}
          problem={action.problem}
          onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
        />
        <FormProblem problem={action.problem?.status === 409 ? undefined : action.problem} />
        <button
          type="submit"
          disabled={action.busy || Boolean(slugError) || !name}
          aria-busy={action.busy || undefined}
        >
          Create organization
        </button>
      </form>
    </>
  );
}

export function OrgSettings() {
  const o = useOrg();
  const { reloadOrgs, me } = useSession();
  const { route } = useLocation();
  const [name, setName] = useState<string>(o.org.name);
  const [description, setDescription] = useState<string>(o.org.description ?? '');
  const [icon, setIcon] = useState<{ id: string; url: string } | null>(null);
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const del = useAction();
  const transfer = useAction();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [confirmTransfer, setConfirmTransfer] = useState(false);
  const [newOwner, setNewOwner] = useState('');
  const denyEdit = o.deny('org.edit');
  const path = { orgSlug: o.slug };
  const others = (o.members ?? []).filter((m) => m.userId !== me.id);
  const iconUrl = icon?.url ?? o.org.iconFile?.url;
  return (
    <>
      <h1>{o.org.name}</h1>
      <section aria-labelledby="settings-h">
        <h2 id="settings-h">Settings</h2>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            setSaved(false);
            const ok = await save.run(() =>
              unwrap(
                api.PATCH('/identity/organizations/{orgSlug}', {
                  params: { path },
                  body: { name, description: description || null, ...(icon ? { iconFile: icon.id } : {}) },
                }),
              ),
            );
            if (ok) {
              setSaved(true);
              await Promise.all([o.reload(), reloadOrgs()]);
            }
          }}
        >
          <fieldset disabled={Boolean(denyEdit)}>
            <Field label="Slug" name="slug" value={o.slug} readOnly hint="The slug cannot change." />
            <Field
              label="Name"
              name="name"
              required
              maxLength={80}
              value={name}
              problem={save.problem}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
            <Field
              label="Description"
              name="description"
              multiline
              maxLength={500}
              value={description}
              problem={save.problem}
              onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
            />
            {iconUrl && <img src={iconUrl} alt="Current icon" width={64} height={64} />}
            <ImageUpload
              label="Icon (PNG, JPEG, WebP or SVG, up to 2 MB)"
              disabled={Boolean(denyEdit)}
              onUploaded={(id, url) => setIcon({ id, url })}
            />
          </fieldset>
          <FormProblem problem={save.problem} />
          {saved && <p role="status">Saved.</p>}
          <GuardedButton type="submit" denied={denyEdit} aria-busy={save.busy || undefined}>
            Save settings
          </GuardedButton>
        </form>
      </section>
      <section aria-labelledby="danger-h">
        <h2 id="danger-h">Danger zone</h2>
        <div class="row">
          <label>
            New owner
            <select
              name="newOwner"
              value={newOwner}
              disabled={Boolean(o.deny('org.ownership.transfer')) || others.length === 0}
              onChange={(e) => setNewOwner((e.target as HTMLSelectElement).value)}
            >
              <option value="">Choose a member…</option>
              {others.map((m) => (
                <option key={m.userId} value={m.userId}>
                  {m.user?.username ?? m.userId}
                </option>
              ))}
            </select>
          </label>
          <GuardedButton
            type="button"
            class="secondary"
            denied={o.deny('org.ownership.transfer')}
            disabled={!newOwner}
            onClick={() => setConfirmTransfer(true)}
          >
            Transfer ownership
          </GuardedButton>
        </div>
        <p />
        <GuardedButton
          type="button"
          class="danger"
          denied={o.deny('org.delete')}
          onClick={() => setConfirmDelete(true)}
        >
          Delete organization
        </GuardedButton>
      </section>
      <Confirm
        open={confirmTransfer}
        title={`Transfer ownership of ${o.org.name}?`}
        confirmLabel="Transfer ownership"
        typeToConfirm={o.slug}
        busy={transfer.busy}
        problem={transfer.problem}
        onCancel={() => setConfirmTransfer(false)}
        onConfirm={async () => {
          const ok = await transfer.run(() =>
            unwrap(
              api.POST('/identity/organizations/{orgSlug}/transfer-ownership', {
                params: { path },
                body: { newOwnerUserId: newOwner },
              }),
            ),
          );
          if (ok) {
            setConfirmTransfer(false);
            await o.reload();
          }
        }}
      >
        <p>You will stop being the Owner of {o.org.name}; the new owner can then delete it.</p>
      </Confirm>
      <Confirm
        open={confirmDelete}
        title={`Delete ${o.org.name}?`}
        confirmLabel="Delete organization"
        typeToConfirm={o.slug}
        busy={del.busy}
        problem={del.problem}
        onCancel={() => setConfirmDelete(false)}
        onConfirm={async () => {
          const ok = await del.run(async () => {
            await unwrap(api.DELETE('/identity/organizations/{orgSlug}', { params: { path } }));
            return true;
          });
          if (ok) {
            setConfirmDelete(false);
            await reloadOrgs();
            route('/console/');
          }
        }}
      >
        <p>
          This deletes the organization <strong>{o.org.name}</strong>, its brands and apps. Users of its apps
          can no longer sign in.
        </p>
      </Confirm>
    </>
  );
}
