import { defaults } from '../../config/defaults.js';
import type { Config } from '../../config/index.js';
import type { Db, Executor } from '../../db/schema.js';
import { ApiError, validationFailed } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId, randomAlphanumeric } from '../../lib/ids.js';
import * as q from './files.queries.js';
import { sanitizeSvg } from './svg-sanitizer.js';

export interface FileTracker {
  id: string;
  fileKey: string;
  url: string;
  contentType: string;
  bytes: number;
}

/** Detects the type from the bytes, never from the client's claim. */
export function sniffImageType(
  data: Buffer,
): 'image/png' | 'image/jpeg' | 'image/webp' | 'image/svg+xml' | null {
  if (
    data.length >= 8 &&
    data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  )
    return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (
    data.length >= 12 &&
    data.toString('latin1', 0, 4) === 'RIFF' &&
    data.toString('latin1', 8, 12) === 'WEBP'
  )
    return 'image/webp';
  const head = data.subarray(0, 1024).toString('utf8').trimStart().toLowerCase();
  if (
    (head.startsWith('<?xml') || head.startsWith('<svg') || head.startsWith('<!--')) &&
    head.includes('<svg')
  )
    return 'image/svg+xml';
  return null;
}

export function fileUrl(config: Config, fileKey: string): string {
  return `${config.filesBaseUrl}/${fileKey}`;
}

/** An upload checked and cleaned: the bytes that would be stored, and their sniffed type. */
export interface PreparedFile {
  data: Buffer;
  type: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/svg+xml';
}

/**
 * Checks an upload's type from its bytes and sanitises an SVG. Refuses (400) what is not an image
 * and (413) what sanitising grew past `maxBytes`: escaping can make an SVG several times larger,
 * so the limit is on what would be stored, not on what was sent.
 */
export async function prepareFile(input: Buffer, maxBytes: number): Promise<PreparedFile> {
  const type = sniffImageType(input);
  if (!type)
    throw validationFailed([
      { field: 'file', code: 'invalid_type', message: 'must be a PNG, JPEG, WebP or SVG image' },
    ]);
  if (type !== 'image/svg+xml') return { data: input, type };
  const clean = await sanitizeSvg(input.toString('utf8'));
  if (!clean)
    throw validationFailed([
      {
        field: 'file',
        code: 'invalid_type',
        message: 'the SVG holds no image once active content is removed',
      },
    ]);
  const data = Buffer.from(clean, 'utf8');
  if (data.length > maxBytes)
    throw new ApiError(413, 'payload_too_large', `the sanitised SVG is larger than ${maxBytes} bytes`, {
      limit: maxBytes,
    });
  return { data, type };
}

/** Stores a prepared file (`prepareFile`). */
export async function storePrepared(
  db: Db,
  config: Config,
  clock: Clock,
  file: PreparedFile,
  ownerUserId: string,
): Promise<FileTracker> {
  const { data, type } = file;
  const ext = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/svg+xml': 'svg' }[type];
  const id = newId('file_');
  const fileKey = `${randomAlphanumeric(24)}.${ext}`;
  await q.insertFile(db, {
    id,
    file_key: fileKey,
    content_type: type,
    bytes: data.length,
    data,
    owner_user_id: ownerUserId,
    created_at: clock.now(),
  });
  return { id, fileKey, url: fileUrl(config, fileKey), contentType: type, bytes: data.length };
}

/** Checks, cleans and stores an upload (`prepareFile`, then `storePrepared`). */
export async function storeFile(
  db: Db,
  config: Config,
  clock: Clock,
  input: { data: Buffer; ownerUserId: string },
): Promise<FileTracker> {
  const file = await prepareFile(input.data, defaults.maxFileBytes);
  return storePrepared(db, config, clock, file, input.ownerUserId);
}

/** The FileTracker for a file id, or a 400 naming `field` when the id is unknown. */
export async function resolveFileId(
  db: Executor,
  config: Config,
  id: string,
  field: string,
  allowed: { uploadedBy: string; current?: string | null },
): Promise<FileTracker> {
  const [row] = await q.fileRowsByIds(db, [id]);
  // Only the caller's own uploads, or the file the field already holds (a second admin re-saving a
  // brand): a file id is not a capability to attach someone else's upload to your org or profile.
  if (!row || (row.owner_user_id !== allowed.uploadedBy && row.id !== allowed.current))
    throw validationFailed([{ field, code: 'not_found', message: 'no file you uploaded has this id' }]);
  return {
    id: row.id,
    fileKey: row.file_key,
    url: fileUrl(config, row.file_key),
    contentType: row.content_type,
    bytes: row.bytes,
  };
}

/** FileTrackers for several ids at once (list responses). */
export async function fileTrackers(
  db: Executor,
  config: Config,
  ids: Array<string | null>,
): Promise<Map<string, FileTracker>> {
  const wanted = [...new Set(ids.filter((x): x is string => !!x))];
  const out = new Map<string, FileTracker>();
  if (wanted.length === 0) return out;
  const rows = await q.fileRowsByIds(db, wanted);
  for (const r of rows)
    out.set(r.id, {
      id: r.id,
      fileKey: r.file_key,
      url: fileUrl(config, r.file_key),
      contentType: r.content_type,
      bytes: r.bytes,
    });
  return out;
}

export async function readFile(db: Db, fileKey: string) {
  const row = await q.fileContentByKey(db, fileKey);
  if (!row) throw new ApiError(404, 'not_found', 'file not found');
  return row;
}
