/**
 * Where to send the user after sign-in. Only a console path of this origin is accepted, so a crafted
 * `state` or stored value can never turn the callback into an open redirect.
 */
export function safeReturnTo(value: string | null | undefined): string {
  if (!value || !/^\/console(\/|\?|#|$)/.test(value)) return '/console/';
  if (value.startsWith('/console/callback')) return '/console/';
  if (/[\\\s]/.test(value)) return '/console/';
  return value;
}
