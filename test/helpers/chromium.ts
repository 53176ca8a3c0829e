/** Debian's Chromium (never a downloaded browser), driven by playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, and nothing that reaches out to the network on its own (the machine's network is closed). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
