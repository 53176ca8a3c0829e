import { createHash, timingSafeEqual } from 'node:crypto';

/** SHA-256 hex. Right for random 256-bit secrets (DESIGN.md §5); never for passwords. */
export function sha256(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

export function sha256b64url(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** Constant-time comparison of two strings (different lengths compare unequal without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}
