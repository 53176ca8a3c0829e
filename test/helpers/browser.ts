/** Debian's Chromium (never a downloaded browser), driven by playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, and quiet: no background, update or sync traffic leaves the test. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
