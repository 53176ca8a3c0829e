import { CopyButton } from './ui.js';

/** The claims of a compact JWS, decoded for display only (whoever relies on it verifies it with the JWKS). */
export function jwsClaims(jws: string): Record<string, unknown> | null {
  const part = jws.split('.')[1];
  if (!part) return null;
  try {
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
    const text = new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** A signed check: the JWS itself with a copy button, and what it says until when. */
export function Attestation({ jws }: { jws: string }) {
  const claims = jwsClaims(jws);
  const exp = typeof claims?.exp === 'number' ? new Date(claims.exp * 1000) : null;
  return (
    <div class="attestation">
      <p>
        <strong>Signed attestation</strong>
        {claims && ` · has_access ${String(claims.has_access)}`}
        {exp && ` · valid until ${exp.toLocaleTimeString()}`} · verify it with the issuer's JWKS.
      </p>
      <pre class="break">{jws}</pre>
      <CopyButton text={jws} label="Copy attestation" />
    </div>
  );
}
