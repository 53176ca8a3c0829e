/**
 * Fixed ids of what every deployment has (DESIGN.md §3 "The console brand"): the system org, its
 * `console` brand and the public `console` app. `src/bootstrap.ts` ensures the rows at start; the
 * modules and the engine recognise them by these ids.
 */
export const SYSTEM_ORG_ID = 'org_system';
export const SYSTEM_ORG_SLUG = 'system';
export const CONSOLE_BRAND_ID = 'brand_console';
export const CONSOLE_BRAND_SLUG = 'console';
export const CONSOLE_CLIENT_ID = 'console';
