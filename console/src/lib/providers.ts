/** The sign-in methods a brand orders on its hosted page: the wallet and the upstream providers. */
export const SIGN_IN_METHODS = [
  'solana',
  'google',
  'apple',
  'microsoft',
  'discord',
  'facebook',
  'x',
  'telegram',
  'matrica',
] as const;
export type SignInMethod = (typeof SIGN_IN_METHODS)[number];
export type ProviderType = Exclude<SignInMethod, 'solana'>;

export const PROVIDER_TYPES = SIGN_IN_METHODS.filter((m): m is ProviderType => m !== 'solana');

/** The labels the hosted sign-in page uses for its buttons. */
export const METHOD_LABELS: Record<string, string> = {
  solana: 'Continue with a Solana wallet',
  google: 'Continue with Google',
  apple: 'Continue with Apple',
  microsoft: 'Continue with Microsoft',
  discord: 'Continue with Discord',
  facebook: 'Continue with Facebook',
  x: 'Continue with X',
  telegram: 'Continue with Telegram',
  matrica: 'Continue with Matrica',
};

/** The brand's order first, then every other method, so the editor always shows all of them. */
export function fullOrder(order: readonly string[]): SignInMethod[] {
  const known = order.filter((m): m is SignInMethod => (SIGN_IN_METHODS as readonly string[]).includes(m));
  return [...new Set([...known, ...SIGN_IN_METHODS])];
}

/** Moves the item at `from` to `to` (a drag and drop, or a move-up/down button). */
export function move<T>(list: T[], from: number, to: number): T[] {
  if (from === to || from < 0 || to < 0 || from >= list.length || to >= list.length) return list;
  const next = list.slice();
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item);
  return next;
}

/** The hosted page's colour rule: a `#rgb`/`#rrggbb` colour, else its default. */
export function previewColor(color: string | undefined | null): string {
  return color && /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(color) ? color : '#2f54eb';
}
