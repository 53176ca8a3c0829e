import { apple } from './apple.js';
import { discord } from './discord.js';
import { facebook } from './facebook.js';
import { google } from './google.js';
import { matrica } from './matrica.js';
import { microsoft } from './microsoft.js';
import type { ProviderDefinition } from './provider.js';
import { telegram } from './telegram.js';
import type { ProviderType } from './types.js';
import { x } from './x.js';

/** Every upstream provider, by connection type. */
export const PROVIDERS: Record<ProviderType, ProviderDefinition> = {
  google,
  apple,
  microsoft,
  discord,
  facebook,
  x,
  telegram,
  matrica,
};

export const PROVIDER_LABELS: Record<ProviderType, string> = {
  google: 'Google',
  apple: 'Apple',
  microsoft: 'Microsoft',
  discord: 'Discord',
  facebook: 'Facebook',
  x: 'X',
  telegram: 'Telegram',
  matrica: 'Matrica',
};
