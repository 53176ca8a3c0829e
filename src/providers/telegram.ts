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
 * The account key of Telegram user `telegramId` as proven by the bot of `botToken`: `<bot id>:<user
 * id>`. The widget's proof is an HMAC with the bot's own token, and an org supplies its brand's
 * token, so a proof says only "this bot's owner vouches for it": whoever holds a bot token can sign
 * any user id. Keyed by the bot, an identity proven through one bot never reaches an account linked
 * through another (as Microsoft's accounts are keyed by tenant).
 */
export function telegramAccountId(botToken: string, telegramId: string): string {
  // BotFather's tokens are `<bot id>:<secret>` (and brands' are checked to be); a token in any
  // other form still gets a namespace of its own, never a shared empty one.
  const colon = botToken.indexOf(':');
  const botId =
    colon > 0
      ? botToken.slice(0, colon)
      : `t${createHash('sha256').update(botToken).digest('hex').slice(0, 16)}`;
  return `${botId}:${telegramId}`;
}

/**
 * Verifies the widget's data (https://core.telegram.org/widgets/login#checking-authorization):
 * HMAC-SHA256 over the data-check string (the received `key=value` pairs but `hash`, sorted by key,
 * joined by newlines) with SHA-256(bot token) as the key, compared in constant time; and an
 * `auth_date` no older than a day (nor in the future) by `nowSec`. The identity (and the claimed id
 * of a refusal) is keyed by the bot: see telegramAccountId.
 */
export function verifyTelegramLogin(
  fields: Record<string, string | undefined>,
  botToken: string,
  nowSec: number,
): TelegramCheck {
  const rawId = str(fields.id);
  const hash = fields.hash;
  const pairs = TELEGRAM_FIELDS.filter((k) => k !== 'hash' && fields[k] !== undefined).map(
    (k) => `${k}=${fields[k]}`,
  );
  const telegramId = rawId && /^[0-9]{1,20}$/.test(rawId) ? rawId : undefined;
  const claimedId = telegramId ? telegramAccountId(botToken, telegramId) : undefined;
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
