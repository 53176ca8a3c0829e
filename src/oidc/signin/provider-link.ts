import type { FastifyReply } from 'fastify';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import type { ProviderType } from '../../providers/types.js';
import { newFlowBinding, setFlowCookie } from './flow-state.js';
import { startOAuth, startTelegram } from './provider-flow.js';

/**
 * Starts linking a provider account to a signed-in user through `brandId` (the console's brand):
 * answers the URL to send the browser to. Bound to the browser that asks (the console, same-origin)
 * and the user whose token it sends: the URL alone completes nothing in another browser. A provider
 * the brand does not offer is a 404.
 */
export async function startProviderLink(
  ctx: AppContext,
  reply: FastifyReply,
  input: { userId: string; type: ProviderType; brandId: string },
): Promise<{ authorizationUrl: string }> {
  const { type } = input;
  const brand = await ctx.stores.signin.brands.callbackId(input.brandId);
  if (!brand) throw new ApiError(404, 'not_found', 'the console brand is not set up');
  const id = newId('pst_');
  const binding = newFlowBinding();
  const start = {
    id,
    type,
    brand,
    purpose: 'link' as const,
    userId: input.userId,
    expiresAt: new Date(ctx.clock.nowMs() + defaults.providerLinkStateTtl * 1000),
    bindingHash: binding.hash,
  };
  let authorizationUrl: string;
  if (type === 'telegram') {
    const t = await startTelegram(ctx, start);
    const callbackId = encodeURIComponent(brand.oauthCallbackId);
    authorizationUrl = `${ctx.config.baseUrl}/oauth/telegram/${callbackId}/widget?binding=${encodeURIComponent(t.binding)}`;
  } else authorizationUrl = await startOAuth(ctx, start);
  setFlowCookie(ctx, reply, 'link', id, binding.value, defaults.providerLinkStateTtl);
  reply.header('cache-control', 'no-store');
  return { authorizationUrl };
}
