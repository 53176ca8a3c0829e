// A self-signed certificate for 127.0.0.1 (openssl), kept in examples/webhook-receiver/.local/.
// Gatehouse delivers only to https URLs: start it trusting this certificate, and allowing loopback
// deliveries, with the line this prints.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CERT_DIR = process.env.CERT_DIR ?? fileURLToPath(new URL('./.local', import.meta.url));

export function ensureCert(dir = CERT_DIR) {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  if (!existsSync(cert)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '30',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
  }
  return { key: readFileSync(key), cert: readFileSync(cert), certPath: cert };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { certPath } = ensureCert();
  console.log(`WEBHOOK_ALLOW_PRIVATE_NETWORKS=true NODE_EXTRA_CA_CERTS=${certPath} npm start`);
}
