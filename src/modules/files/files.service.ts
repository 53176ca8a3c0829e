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

export async function storeFile(
  db: Db,
  config: Config,
  clock: Clock,
  input: { data: Buffer; ownerUserId: string },
): Promise<FileTracker> {
  let data = input.data;
  const type = sniffImageType(data);
  if (!type)
    throw validationFailed([
      { field: 'file', code: 'invalid_type', message: 'must be a PNG, JPEG, WebP or SVG image' },
    ]);
  if (type === 'image/svg+xml') {
    const clean = await sanitizeSvg(data.toString('utf8'));
    if (!clean)
      throw validationFailed([
        {
          field: 'file',
          code: 'invalid_type',
          message: 'the SVG holds no image once active content is removed',
        },
      ]);
    data = Buffer.from(clean, 'utf8');
  }
  const ext = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/svg+xml': 'svg' }[type];
  const id = newId('file_');
  const fileKey = `${randomAlphanumeric(24)}.${ext}`;
  await q.insertFile(db, {
    id,
    file_key: fileKey,
    content_type: type,
    bytes: data.length,
    data,
    owner_user_id: input.ownerUserId,
    created_at: clock.now(),
  });
  return { id, fileKey, url: fileUrl(config, fileKey), contentType: type, bytes: data.length };
}

/** The FileTracker for a file id, or a 400 naming `field` when the id is unknown. */
export async function resolveFileId(
  db: Executor,
  config: Config,
  id: string,
  field: string,
): Promise<FileTracker> {
  const [row] = await q.fileRowsByIds(db, [id]);
  if (!row) throw validationFailed([{ field, code: 'not_found', message: 'no uploaded file with this id' }]);
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
