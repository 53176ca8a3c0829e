// Builds the console (console/ → console/dist) when the bundle is missing or older than its sources.
// Run by `npm install` (prepare) and before `npm start`; a second run with nothing changed is a no-op.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const consoleDir = join(root, 'console');
const dist = join(consoleDir, 'dist');
const stampFile = join(dist, '.source-hash');

function files(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? files(p) : [p];
    });
}

/** A hash of everything the bundle is made from: the console's sources and the pinned dependencies. */
export function sourceHash() {
  const h = createHash('sha256');
  const inputs = [
    join(consoleDir, 'index.html'),
    join(consoleDir, 'vite.config.ts'),
    ...files(join(consoleDir, 'src')),
    join(root, 'package-lock.json'),
  ];
  for (const f of inputs) {
    h.update(f.slice(root.length));
    h.update(readFileSync(f));
  }
  return h.digest('hex');
}

const want = sourceHash();
const have = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : '';
if (have === want && existsSync(join(dist, 'index.html'))) process.exit(0);

let vite;
try {
  vite = await import('vite');
} catch {
  console.warn(
    'console: vite is not installed (production install?); /console serves the last build, if any',
  );
  process.exit(0);
}
console.log('console: building the bundle');
await vite.build({ configFile: join(consoleDir, 'vite.config.ts'), logLevel: 'warn' });
writeFileSync(stampFile, `${want}\n`);
