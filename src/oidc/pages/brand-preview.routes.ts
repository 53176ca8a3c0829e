import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { limits } from '../../config/defaults.js';
import { sendErrorPage, safeColor, safeUrl } from './html.js';
import { renderSigninPage } from './signin-page.js';
import { SIGN_IN_METHODS } from '../../providers/types.js';

/**
 * The form's values as they are being typed: lenient on purpose (a half-typed URL or colour is left
 * out of the page, as the hosted page leaves out what it cannot use), bounded like every input.
 */
export const BrandPreviewQuery = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: limits.nameMax })),
    primaryColor: Type.Optional(Type.String({ maxLength: 7 })),
    logoUrl: Type.Optional(Type.String({ maxLength: 2000 })),
    privacyPolicyUrl: Type.Optional(Type.String({ maxLength: 2000 })),
    termsUrl: Type.Optional(Type.String({ maxLength: 2000 })),
    supportEmail: Type.Optional(Type.String({ maxLength: 254 })),
    /** Sign-in methods, comma-separated, in the order the page shows them. */
    providerOrder: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

/**
 * Only the console's own frame may load it: the browser says so (`Sec-Fetch-Dest: iframe` from our
 * origin), and the page may be framed by our origin only. A link to it opened anywhere else is
 * refused, so it cannot serve as a look-alike sign-in page.
 */
function fromConsoleFrame(req: FastifyRequest): boolean {
  return req.headers['sec-fetch-dest'] === 'iframe' && req.headers['sec-fetch-site'] === 'same-origin';
}

/**
 * The brand editor's preview: the real hosted sign-in renderer (src/oidc/pages/signin-page.ts) with
 * the form's unsaved values, for an iframe of the console. Nothing in it works: it belongs to no
 * interaction, so its buttons lead nowhere.
 */
export const brandPreviewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const files = app.ctx.config.filesBaseUrl.replace(/\/*$/, '/');
  app.get(
    '/console/brand-preview',
    {
      schema: {
        hide: true,
        querystring: BrandPreviewQuery,
        response: { 200: Type.String(), 403: Type.String() },
      },
    },
    async (req, reply) => {
      if (!fromConsoleFrame(req))
        return sendErrorPage(reply, 403, 'forbidden', 'The brand preview is shown inside the console only.');
      const q = req.query;
      const known = new Set<string>(SIGN_IN_METHODS);
      const order = [...new Set((q.providerOrder ?? 'solana').split(',').filter((m) => known.has(m)))];
      // Only logos uploaded here (the files origin): the console sends the uploaded file's URL.
      const logo = q.logoUrl?.startsWith(files) ? safeUrl(q.logoUrl) : undefined;
      const name = q.name?.trim() || 'Brand name';
      return renderSigninPage(
        reply,
        {
          id: 'preview',
          step: 'signin',
          brand: {
            slug: 'preview',
            name,
            logoUrl: logo,
            primaryColor: safeColor(q.primaryColor),
            privacyPolicyUrl: safeUrl(q.privacyPolicyUrl),
            termsUrl: safeUrl(q.termsUrl),
          },
          app: { clientId: 'preview', name: 'Your app' },
          scopes: [],
          providers: order.length ? order : ['solana'],
          expiresAt: new Date(0).toISOString(),
        },
        {
          baseUrl: app.ctx.config.baseUrl,
          preview: true,
          brand: {
            name,
            logoUrl: logo,
            primaryColor: safeColor(q.primaryColor),
            privacyPolicyUrl: safeUrl(q.privacyPolicyUrl),
            termsUrl: safeUrl(q.termsUrl),
            supportEmail: q.supportEmail && /^[^\s@]+@[^\s@]+$/.test(q.supportEmail) ? q.supportEmail : null,
          },
        },
      );
    },
  );
};
