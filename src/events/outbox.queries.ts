import type { Insertable } from 'kysely';
import type { EventsTable, Executor } from '../db/schema.js';

/** The record of a catalog event, written in the transaction of the change that fired it. */
export async function insertEvent(db: Executor, row: Insertable<EventsTable>): Promise<void> {
  await db.insertInto('events').values(row).execute();
}
