import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config/index.js';
import { consoleToken, signInWithWallet } from './dev/signin.js';
import { DevError, devWalletPath, openDevWallet } from './dev/wallet.js';
import { defaults } from './config/defaults.js';
import { openDatabase } from './db/index.js';
import { migrate } from './db/migrate.js';
import {
  grantSystemPermissions,
  revokeSystemPermissions,
} from './modules/orgs/system-permissions.queries.js';
import { findAnyUserIdByIdOrUsername, findUserIdByWallet } from './modules/users/users.queries.js';
import type { Db } from './db/schema.js';
import { ADMIN_PERMISSIONS, normalizePermission } from './http/permissions.js';
import { systemClock } from './lib/clock.js';
import { Encryptor } from './lib/encryption.js';
import { isSolanaAddress } from './lib/solana.js';
import { rotateSigningKey } from './stores/signing-keys.store.js';

const USAGE = `usage: gatehouse [command]
  serve                                 start the server (default)
  migrate                               apply database migrations
  keys rotate                           add a new signing key; the old one stays in the JWKS until its tokens expire
  admin grant <user> [permission ...]   give system permissions (default: all AdminPermission.*)
  admin revoke <user> [permission ...]  take them back (default: all)
  dev token [--json] [--wallet <name>] [--scope <scopes>]
                                        sign the local development wallet in to the running server
                                        through the console app and print its console access token
  dev signin <authorize URL> [--wallet <name>] [--deny]
                                        sign the wallet in to any app's authorization request and
                                        print where the issuer redirects (the app's redirect URI + code)
  dev wallet [--wallet <name>]          print the development wallet's address (created on first use)
<user> is a user id, a username or a wallet address. The dev wallet is an Ed25519 keypair file in
DATA_DIR (dev-wallet.json, mode 0600); "dev" is refused when NODE_ENV=production.`;

class UsageError extends Error {}

async function findUser(db: Db, ident: string): Promise<string> {
  const byIdOrName = await findAnyUserIdByIdOrUsername(db, ident);
  if (byIdOrName) return byIdOrName;
  if (isSolanaAddress(ident)) {
    // user_public_keys arrives with the users module; absent before its migration.
    try {
      const holder = await findUserIdByWallet(db, ident);
      if (holder) return holder;
    } catch {
      /* no wallets table yet */
    }
  }
  throw new UsageError(`no user found for "${ident}"`);
}

function parsePermissions(args: string[]): string[] {
  if (args.length === 0) return [...ADMIN_PERMISSIONS];
  return args.map((a) => {
    const p = normalizePermission(a);
    if (!p || !(ADMIN_PERMISSIONS as readonly string[]).includes(p))
      throw new UsageError(`unknown system permission "${a}" (known: ${ADMIN_PERMISSIONS.join(', ')})`);
    return p;
  });
}

/**
 * `gatehouse dev …`: a client of the running server for local development. It signs a wallet kept
 * in DATA_DIR in through the real sign-in flow, so it is refused outright in production.
 */
async function runDev(argv: string[], out: (s: string) => void): Promise<number> {
  if (process.env.NODE_ENV === 'production')
    throw new UsageError(
      'gatehouse dev is for local development only and is refused when NODE_ENV=production',
    );
  const { values, positionals } = parseCliArgs(argv);
  // Only BASE_URL, PORT and DATA_DIR matter here: a placeholder key keeps loadConfig from creating
  // DATA_DIR/encryption.key, which belongs to the server.
  const config = loadConfig(
    { ...process.env, ENCRYPTION_KEY: Buffer.alloc(32).toString('base64') },
    () => {},
  );
  try {
    return await devCommand(positionals, values, config.issuer, config.dataDir, out);
  } catch (e) {
    // oauth4webapi's and fetch's errors say what went wrong in their message; a stack adds nothing.
    if (e instanceof UsageError || e instanceof DevError) throw e;
    throw new DevError(`gatehouse dev: ${(e as Error).message}`);
  }
}

async function devCommand(
  positionals: string[],
  values: ReturnType<typeof parseCliArgs>['values'],
  issuer: string,
  dataDir: string,
  out: (s: string) => void,
): Promise<number> {
  const [action, target] = positionals;
  const wallet = openDevWallet(devWalletPath(dataDir, values.wallet));
  const log = (line: string) => console.error(line);
  if (wallet.created) log(`created development wallet ${wallet.address} in ${wallet.path}`);
  switch (action) {
    case 'wallet':
      out(wallet.address);
      return 0;
    case 'token': {
      const { tokens, userId } = await consoleToken(issuer, { wallet, log, scope: values.scope });
      log(`signed in as user ${userId}`);
      out(values.json ? JSON.stringify(tokens, null, 2) : tokens.access_token);
      return 0;
    }
    case 'signin': {
      if (!target) throw new UsageError(USAGE);
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        throw new UsageError(`not a URL: ${target}`);
      }
      out(String(await signInWithWallet(url, { wallet, log, consent: values.deny ? 'deny' : 'allow' })));
      return 0;
    }
    default:
      throw new UsageError(USAGE);
  }
}

function parseCliArgs(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        deny: { type: 'boolean' },
        wallet: { type: 'string' },
        scope: { type: 'string' },
      },
    });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n${USAGE}`);
  }
}

export async function runCli(argv: string[], out: (s: string) => void = console.log): Promise<number> {
  const [cmd = 'serve', sub, ...rest] = argv;
  if (cmd === 'serve') {
    const { main } = await import('./main.js');
    await main();
    return 0;
  }
  if (cmd === 'help' || cmd === '--help' || cmd === '-h') {
    out(USAGE);
    return 0;
  }
  if (cmd === 'dev')
    return runDev(
      [sub, ...rest].filter((a) => a !== undefined),
      out,
    );
  const config = loadConfig(process.env, () => {});
  const handle = await openDatabase(config, { preferSocket: true });
  const db = handle.db;
  try {
    switch (cmd) {
      case 'migrate': {
        const applied = await migrate(db);
        out(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
        return 0;
      }
      case 'keys': {
        if (sub !== 'rotate') throw new UsageError(USAGE);
        await migrate(db);
        const kid = await rotateSigningKey(db, new Encryptor(config.encryptionKey), systemClock);
        out(
          `new signing key ${kid} is published and signs tokens within ${defaults.keyActivationDelayMs / 1000} s; previous keys stay in the JWKS until their tokens expire`,
        );
        return 0;
      }
      case 'admin': {
        if ((sub !== 'grant' && sub !== 'revoke') || rest.length === 0) throw new UsageError(USAGE);
        const [ident, ...perms] = rest;
        const permissions = parsePermissions(perms);
        const userId = await findUser(db, ident);
        if (sub === 'grant') {
          await grantSystemPermissions(db, userId, permissions, systemClock.now());
          out(`granted ${permissions.join(', ')} to ${userId}`);
        } else {
          await revokeSystemPermissions(db, userId, permissions);
          out(`revoked ${permissions.join(', ')} from ${userId}`);
        }
        return 0;
      }
      default:
        throw new UsageError(USAGE);
    }
  } finally {
    await handle.close();
  }
}

if (
  import.meta.url === `file://${process.argv[1]}` ||
  process.argv[1]?.endsWith('gatehouse.mjs') ||
  process.argv[1]?.endsWith('/gatehouse')
) {
  runCli(process.argv.slice(2)).then(
    (code) => {
      if (process.argv[2] !== 'serve' && process.argv[2] !== undefined) process.exit(code);
    },
    (err) => {
      if (err instanceof DevError) {
        console.error(err.message);
        process.exit(1);
      }
      if (err instanceof UsageError || err instanceof ConfigError) {
        console.error(err.message);
        process.exit(2);
      }
      console.error(err);
      process.exit(1);
    },
  );
}
