import type { Insertable } from 'kysely';
import type { Executor, FilesTable } from '../../db/schema.js';

export function insertFile(db: Executor, row: Insertable<FilesTable>): Promise<unknown> {
  return db.insertInto('files').values(row).execute();
}

/** The tracker columns of the files with these ids (unknown ids are absent). */
export function fileRowsByIds(db: Executor, ids: string[]) {
  return db
    .selectFrom('files')
    .select(['id', 'file_key', 'content_type', 'bytes', 'owner_user_id'])
    .where('id', 'in', ids)
    .execute();
}

export function fileContentByKey(db: Executor, fileKey: string) {
  return db
    .selectFrom('files')
    .select(['content_type', 'data', 'bytes'])
    .where('file_key', '=', fileKey)
    .executeTakeFirst();
}
