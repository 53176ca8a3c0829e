import { useLocation, useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.js';
import { OrderEditor } from '../components/order-editor.js';
import { SigninPreview } from '../components/signin-preview.js';
import { Confirm, Empty, Field, FormProblem, GuardedButton, LoadError, Loading } from '../components/ui.js';
import { ImageUpload } from '../components/upload.js';
import { useAction, useLoad } from '../hooks.js';
import { fullOrder, type SignInMethod } from '../lib/providers.js';
import { slugProblem } from '../lib/slug.js';
import { useOrg } from '../session.js';

// biome-ignore lint/suspicious/noExplicitAny: API shapes come from the generated client
type Json = any;

export function BrandNav({ brand }: { brand: string }) {
  const { slug } = useOrg();
  const { path } = useLocation();
  const base = `/console/orgs/${slug}/brands/${brand}`;
  const links: [string, string][] = [
    [base, 'Branding'],
    [`${base}/apps`, 'Apps'],
    [`${base}/scopes`, 'Scopes'],
    [`${base}/connections`, 'Connections'],
  ];
  return (
    <nav aria-label="Brand" class="tabs">
      <ul>
        <li>
          <a href={`/console/orgs/${slug}/brands`}>All brands</a>
        </li>
        {links.map(([href, label]) => (
          <li key={href}>
            <a
              href={href}
              aria-current={(href === base ? path === base : path.startsWith(href)) ? 'page' : undefined}
            >
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

export function Brands() {
  const o = useOrg();
  const brands = useLoad(
    () =>
      unwrap(
        api.GET('/identity/organizations/{orgSlug}/brands', {
          params: { path: { orgSlug: o.slug }, query: { limit: 100, offset: 0 } },
        }),
      ),
    [o.slug],
  );
  const deny = o.deny('org.brands.edit');
  return (
    <>
      <hgroup>
        <h1>Brands</h1>
        <p>A brand is what users see when they sign in: its name, logo, colour and sign-in methods.</p>
      </hgroup>
      {brands.loading && !brands.data && <Loading what="brands" />}
      {brands.error && <LoadError problem={brands.error} />}
      {brands.data &&
        (brands.data.items.length === 0 ? (
          <Empty>No brands yet.</Empty>
        ) : (
          <div class="cards">
            {brands.data.items.map((b: Json) => (
              <article key={b.slug}>
                <h2>
                  <a href={`/console/orgs/${o.slug}/brands/${b.slug}`}>{b.name}</a>
                </h2>
                <p>
                  <code>{b.slug}</code>
                </p>
              </article>
            ))}
          </div>
        ))}
      <p>
        {deny ? (
          <GuardedButton type="button" denied={deny}>
            Create brand
          </GuardedButton>
        ) : (
          <a href={`/console/orgs/${o.slug}/brands/new`} class="button-link">
            Create brand
          </a>
        )}
      </p>
    </>
  );
}

interface BrandValues {
  name: string;
  primaryColor: string;
  supportEmail: string;
  privacyPolicyUrl: string;
  termsUrl: string;
  logo: { id: string; url: string } | null;
  order: SignInMethod[];
}

const valuesOf = (b: Json | undefined): BrandValues => ({
  name: b?.name ?? '',
  primaryColor: b?.primaryColor ?? '#2f54eb',
  supportEmail: b?.supportEmail ?? '',
  privacyPolicyUrl: b?.privacyPolicyUrl ?? '',
  termsUrl: b?.termsUrl ?? '',
  logo: b?.logoFile ? { id: b.logoFile.id, url: b.logoFile.url } : null,
  order: fullOrder(b?.providerOrder ?? []),
});

/** The brand form with the live preview beside it, for create and edit. */
function BrandForm(props: {
  initial?: Json;
  disabled: string | null;
  submitLabel: string;
  slugField?: preact.ComponentChildren;
  problem?: import('../lib/problems.js').ApiProblem;
  busy: boolean;
  onSubmit: (v: BrandValues) => void;
}) {
  const [v, setV] = useState<BrandValues>(() => valuesOf(props.initial));
  const set = (k: keyof BrandValues) => (e: Event) =>
    setV({ ...v, [k]: (e.target as HTMLInputElement).value });
  return (
    <div class="split">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          props.onSubmit(v);
        }}
      >
        <fieldset disabled={Boolean(props.disabled)}>
          {props.slugField}
          <Field
            label="Name"
            name="name"
            required
            maxLength={80}
            value={v.name}
            problem={props.problem}
            onInput={set('name')}
          />
          <div class="row">
            <Field
              label="Primary colour"
              name="primaryColor"
              type="color"
              value={v.primaryColor}
              problem={props.problem}
              onInput={set('primaryColor')}
            />
          </div>
          <Field
            label="Support email"
            name="supportEmail"
            type="email"
            value={v.supportEmail}
            problem={props.problem}
            onInput={set('supportEmail')}
          />
          <Field
            label="Privacy policy URL"
            name="privacyPolicyUrl"
            type="url"
            placeholder="https://"
            value={v.privacyPolicyUrl}
            problem={props.problem}
            onInput={set('privacyPolicyUrl')}
          />
          <Field
            label="Terms URL"
            name="termsUrl"
            type="url"
            placeholder="https://"
            value={v.termsUrl}
            problem={props.problem}
            onInput={set('termsUrl')}
          />
          <ImageUpload
            label="Logo (PNG, JPEG, WebP or SVG, up to 2 MB)"
            disabled={Boolean(props.disabled)}
            onUploaded={(id, url) => setV({ ...v, logo: { id, url } })}
          />
          <OrderEditor
            order={v.order}
            disabled={Boolean(props.disabled)}
            onChange={(order) => setV({ ...v, order })}
          />
        </fieldset>
        <FormProblem problem={props.problem} />
        <GuardedButton type="submit" denied={props.disabled} aria-busy={props.busy || undefined}>
          {props.submitLabel}
        </GuardedButton>
      </form>
      <SigninPreview
        name={v.name}
        color={v.primaryColor}
        logoUrl={v.logo?.url}
        privacyPolicyUrl={v.privacyPolicyUrl}
        termsUrl={v.termsUrl}
        supportEmail={v.supportEmail}
        order={v.order}
      />
    </div>
  );
}

const optional = (s: string) => (s.trim() ? s.trim() : undefined);

export function CreateBrand() {
  const o = useOrg();
  const { route } = useLocation();
  const action = useAction();
  const [slug, setSlug] = useState('');
  const slugError = slug ? slugProblem(slug) : null;
  return (
    <>
      <h1>Create a brand</h1>
      <BrandForm
        disabled={o.deny('org.brands.edit')}
        submitLabel="Create brand"
        busy={action.busy}
        problem={action.problem}
        slugField={
          <Field
            label="Slug"
            name="slug"
            required
            value={slug}
            hint="3 to 30 lower-case letters, digits or dashes: the audience of this brand's tokens. It cannot change."
            error={
              slugError ??
              action.problem?.fields.slug ??
              (action.problem?.status === 409 ? action.problem.message : null)
            }
            onInput={(e) => setSlug((e.target as HTMLInputElement).value)}
          />
        }
        onSubmit={async (v) => {
          const brand = await action.run(() =>
            unwrap(
              api.POST('/identity/organizations/{orgSlug}/brands', {
                params: { path: { orgSlug: o.slug } },
                body: {
                  slug,
                  name: v.name,
                  primaryColor: v.primaryColor,
                  supportEmail: optional(v.supportEmail),
                  privacyPolicyUrl: optional(v.privacyPolicyUrl),
                  termsUrl: optional(v.termsUrl),
                  logoFile: v.logo?.id,
                  providerOrder: v.order,
                },
              }),
            ),
          );
          if (brand) route(`/console/orgs/${o.slug}/brands/${brand.slug}`);
        }}
      />
    </>
  );
}

export function BrandEdit() {
  const o = useOrg();
  const { params } = useRoute();
  const { route } = useLocation();
  const path = { orgSlug: o.slug, brandSlug: params.brand };
  const brand = useLoad(
    () => unwrap(api.GET('/identity/organizations/{orgSlug}/brands/{brandSlug}', { params: { path } })),
    [o.slug, params.brand],
  );
  const save = useAction();
  const del = useAction();
  const [saved, setSaved] = useState(false);
  const [confirm, setConfirm] = useState(false);
  const deny = o.deny('org.brands.edit');
  if (brand.error) return <LoadError problem={brand.error} />;
  if (!brand.data) return <Loading what="the brand" />;
  const b = brand.data;
  return (
    <>
      <BrandNav brand={params.brand} />
      <h1>{b.name}</h1>
      <p>
        Slug <code>{b.slug}</code> · callback id <code>{b.oauthCallbackId}</code>
      </p>
      <BrandForm
        key={b.updatedAt}
        initial={b}
        disabled={deny}
        submitLabel="Save brand"
        busy={save.busy}
        problem={save.problem}
        onSubmit={async (v) => {
          setSaved(false);
          const ok = await save.run(() =>
            unwrap(
              api.PATCH('/identity/organizations/{orgSlug}/brands/{brandSlug}', {
                params: { path },
                body: {
                  name: v.name,
                  primaryColor: v.primaryColor,
                  supportEmail: optional(v.supportEmail) ?? null,
                  privacyPolicyUrl: optional(v.privacyPolicyUrl) ?? null,
                  termsUrl: optional(v.termsUrl) ?? null,
                  logoFile: v.logo?.id ?? null,
                  providerOrder: v.order,
                },
              }),
            ),
          );
          if (ok) {
            setSaved(true);
            await brand.reload();
          }
        }}
      />
      {saved && <p role="status">Saved.</p>}
      <section aria-labelledby="brand-danger">
        <h2 id="brand-danger">Danger zone</h2>
        <GuardedButton type="button" class="danger" denied={deny} onClick={() => setConfirm(true)}>
          Delete brand
        </GuardedButton>
      </section>
      <Confirm
        open={confirm}
        title={`Delete the brand ${b.name}?`}
        confirmLabel="Delete brand"
        typeToConfirm={b.slug}
        busy={del.busy}
        problem={del.problem}
        onCancel={() => setConfirm(false)}
        onConfirm={async () => {
          const ok = await del.run(async () => {
            await unwrap(
              api.DELETE('/identity/organizations/{orgSlug}/brands/{brandSlug}', { params: { path } }),
            );
            return true;
          });
          if (ok) route(`/console/orgs/${o.slug}/brands`);
        }}
      >
        <p>Its apps stop signing users in. The slug stays reserved.</p>
      </Confirm>
    </>
  );
}
