import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { authenticate, principalOf } from '../../http/auth.js';
import { routeDoc } from '../../http/route-doc.js';
import { authErrors, Slug } from '../../http/schemas.js';
import { slugClaimHolder } from './orgs.queries.js';

export const SlugAvailabilityQuery = Type.Object({ slug: Slug }, { additionalProperties: false });

export const SlugAvailability = Type.Object({
  slug: Type.String(),
  available: Type.Boolean(),
  /** Why not: a live org holds it (`taken`), or a deleted org's 90-day reservation (`reserved`). */
  reason: Type.Optional(Type.Union([Type.Literal('taken'), Type.Literal('reserved')])),
});

/**
 * Whether `slug` can be claimed by a new org now: the same rule `createOrg` enforces through the
 * unique `slug_claim` (a live org, or a deleted one within its reservation, holds it).
 */
export async function slugAvailability(ctx: AppContext, slug: string) {
  const holder = await slugClaimHolder(ctx.db, slug);
  if (!holder) return { slug, available: true };
  if (!holder.deleted_at) return { slug, available: false, reason: 'taken' as const };
  const reservedUntil = holder.deleted_at.getTime() + defaults.orgSlugReservation * 1000;
  if (ctx.clock.now().getTime() >= reservedUntil) return { slug, available: true };
  return { slug, available: false, reason: 'reserved' as const };
}

const doc = routeDoc('Organizations');

/**
 * The console's "slug checked as you type". Outside `/identity/organizations/:orgSlug` on purpose:
 * a static segment there would hide an org whose slug is that word.
 */
export const slugAvailabilityRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  app.get(
    '/identity/organization-slug-availability',
    {
      schema: {
        ...doc('checkOrganizationSlugAvailability', 'Whether an org slug can be claimed now', {
          description:
            'A slug held by a live org is `taken`; one of an org deleted less than 90 days ago is `reserved`. The format is the slug rule (400 otherwise). Rate-limited per user and network source.',
        }),
        querystring: SlugAvailabilityQuery,
        response: { 200: SlugAvailability, ...authErrors },
      },
      config: { apiKeyScope: ['users:read'] },
      preHandler: [
        authenticate(ctx),
        ctx.rateLimits.guard('orgSlugAvailability', (req) =>
          req.principal ? `${principalOf(req).userId}:${ctx.rateLimits.source(req)}` : undefined,
        ),
      ],
    },
    async (req, reply) =>
      reply.header('cache-control', 'no-store').send(await slugAvailability(ctx, req.query.slug)),
  );
};
