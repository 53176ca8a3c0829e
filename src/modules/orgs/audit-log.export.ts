import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../../context.js';
import { routeDoc } from '../../http/route-doc.js';
import { authErrors } from '../../http/schemas.js';
import { csvRow } from '../../lib/csv.js';
import { type AuditCursor, auditBatchAfter } from '../../events/audit-log.queries.js';
import { auditFilterOf, presentEntry } from './audit-log.service.js';
import { type OrgScopeOptions, orgScope } from './org-scope.js';
import { AuditEntrySchema, AuditLogQuery, OrgParams } from './orgs.schemas.js';

const doc = routeDoc('Audit log');

const { limit: _limit, offset: _offset, ...filters } = AuditLogQuery.properties;
export const AuditExportQuery = Type.Object(
  { ...filters, format: Type.Union([Type.Literal('csv'), Type.Literal('json')], { default: 'json' }) },
  { additionalProperties: false },
);
type ExportQuery = Static<typeof AuditExportQuery>;

const CSV_COLUMNS = ['id', 'timestamp', 'actorUserId', 'action', 'resourceType', 'resourceId', 'metadata'];

/**
 * Every entry that matches, newest first, read in keyset batches of `auditExportBatch`: memory stays
 * flat whatever the size of the log, and the response streams as the batches come.
 */
async function* entries(ctx: AppContext, orgId: string, q: ExportQuery) {
  const filter = auditFilterOf(q);
  let cursor: AuditCursor | undefined;
  for (;;) {
    const rows = await auditBatchAfter(ctx.db, orgId, filter, cursor, defaults.auditExportBatch);
    for (const r of rows) yield presentEntry(r);
    if (rows.length < defaults.auditExportBatch) return;
    const last = rows[rows.length - 1];
    cursor = { timestamp: last.timestamp, id: last.id };
  }
}

async function* csv(ctx: AppContext, orgId: string, q: ExportQuery) {
  yield csvRow(CSV_COLUMNS);
  for await (const e of entries(ctx, orgId, q))
    yield csvRow([
      e.id,
      e.timestamp,
      e.actorUserId,
      e.action,
      e.resourceType,
      e.resourceId,
      e.metadata ? JSON.stringify(e.metadata) : '',
    ]);
}

async function* json(ctx: AppContext, orgId: string, q: ExportQuery) {
  let first = true;
  yield '[';
  for await (const e of entries(ctx, orgId, q)) {
    yield `${first ? '\n' : ',\n'}${JSON.stringify(e)}`;
    first = false;
  }
  yield '\n]\n';
}

/** `GET …/audit-log/export`: the filtered entries as one CSV or JSON file, streamed. */
export const auditExportRoutes: FastifyPluginAsyncTypebox<OrgScopeOptions> = async (app, opts) => {
  const ctx = app.ctx;
  const scope = orgScope(ctx, opts);
  app.get(
    '/:orgSlug/audit-log/export',
    {
      schema: {
        ...doc('exportAuditLog', "Export an organization's audit log as CSV or JSON", {
          description:
            'Every entry matching the audit log filters, newest first, streamed (any size). CSV has the columns ' +
            `${CSV_COLUMNS.join(', ')} (metadata as JSON); a cell a spreadsheet would take for a formula ` +
            "starts with '. JSON is an array of audit log entries.",
        }),
        params: OrgParams,
        querystring: AuditExportQuery,
        response: {
          // Fastify's per-media-type form; the body is a stream (never serialised).
          200: Type.Unsafe<Readable>({
            content: {
              'text/csv': { schema: Type.String() },
              'application/json': { schema: Type.Array(AuditEntrySchema) },
            },
          }),
          ...authErrors,
        },
      },
      preHandler: scope.auditRead('org.members.view'),
    },
    async (req, reply) => {
      const { format } = req.query;
      const day = ctx.clock.now().toISOString().slice(0, 10);
      const body = format === 'csv' ? csv(ctx, req.org.id, req.query) : json(ctx, req.org.id, req.query);
      return reply
        .header(
          'content-type',
          format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
        )
        .header('content-disposition', `attachment; filename="audit-log-${req.org.slug}-${day}.${format}"`)
        .header('cache-control', 'no-store')
        .send(Readable.from(body));
    },
  );
};
