import { createHash, createHmac } from 'node:crypto';
import { defaults } from '../config/defaults.js';
import { safeEqual } from '../lib/hash.js';
import { type ExternalIdentity, httpUrl, str, type TelegramProviderDefinition } from './provider.js';

/** Telegram Login Widget: no OAuth; the widget's fields arrive signed with the bot token. */
export const telegram: TelegramProviderDefinition = {
  kind: 'telegram',
  type: 'telegram',
  widgetScriptUrl: 'https://telegram.org/js/telegram-widget.js?22',
};

/** The fields the widget sends; anything else on the callback is not part of the signature. */
export const TELEGRAM_FIELDS = [
  'id',
  'first_name',
  'last_name',
  'username',
  'photo_url',
  'auth_date',
  'hash',
] as const;

export type TelegramCheck =
  | { ok: true; identity: ExternalIdentity }
  | { ok: false; reason: 'invalid_hash' | 'expired'; claimedId?: string };

/**
 * The id of the bot a token belongs to (BotFather's tokens are `<bot id>:<secret>`, and brands' are
 * checked to be); a token in any other form gets a name of its own, never a shared empty one.
 */
export function telegramBotId(botToken: string): string {
  const colon = botToken.indexOf(':');
  return colon > 0
    ? botToken.slice(0, colon)
    : `t${createHash('sha256').update(botToken).digest('hex').slice(0, 16)}`;
}

/**
 * Whose word a Telegram proof is, the namespace of the accounts it may reach. The widget's proof is
 * an HMAC with the bot's own token, so it says only "whoever holds this token vouches for this user
 * id", and anyone can name any bot id with a token of their own making. So:
 * - the operator's default bot (`PROVIDER_TELEGRAM_BOT_TOKEN`, trusted like the rest of the
 *   configuration) is its bot id, shared by every brand that uses it;
 * - a brand's own connection is that brand: its org supplied the token, so its proofs reach only
 *   accounts made or linked through that brand (a new token, or another bot, keeps them).
 */
export function telegramNamespace(source: 'brand' | 'default', brandId: string, botToken: string): string {
  return source === 'default' ? telegramBotId(botToken) : brandId;
}

/**
 * Verifies the widget's data (https://core.telegram.org/widgets/login#checking-authorization):
 * HMAC-SHA256 over the data-check string (the received `key=value` pairs but `hash`, sorted by key,
 * joined by newlines) with SHA-256(bot token) as the key, compared in constant time; and an
 * `auth_date` no older than a day (nor in the future) by `nowSec`. The identity (and the claimed id
 * of a refusal) is `<namespace>:<user id>`: see telegramNamespace.
 */
export function verifyTelegramLogin(
  fields: Record<string, string | undefined>,
  botToken: string,
  nowSec: number,
  namespace: string = telegramBotId(botToken),
): TelegramCheck {
  const rawId = str(fields.id);
  const hash = fields.hash;
  const pairs = TELEGRAM_FIELDS.filter((k) => k !== 'hash' && fields[k] !== undefined).map(
    (k) => `${k}=${fields[k]}`,
  );
  const telegramId = rawId && /^[0-9]{1,20}$/.test(rawId) ? rawId : undefined;
  const claimedId = telegramId ? `${namespace}:${telegramId}` : undefined;
  if (!hash || !/^[0-9a-f]{64}$/.test(hash) || !telegramId || !claimedId) {
    return { ok: false, reason: 'invalid_hash', claimedId };
  }
  const key = createHash('sha256').update(botToken).digest();
  const expected = createHmac('sha256', key).update(pairs.sort().join('\n')).digest('hex');
  if (!safeEqual(expected, hash)) return { ok: false, reason: 'invalid_hash', claimedId };
  const authDate = Number(fields.auth_date);
  if (
    !Number.isInteger(authDate) ||
    nowSec - authDate > defaults.telegramAuthMaxAge ||
    authDate - nowSec > 60
  ) {
    return { ok: false, reason: 'expired', claimedId };
  }
  return {
    ok: true,
    identity: {
      externalUserId: claimedId,
      legacyExternalUserId: telegramId,
      username: str(fields.username),
      firstName: str(fields.first_name),
      lastName: str(fields.last_name),
      pictureUrl: httpUrl(fields.photo_url),
    },
  };
}
