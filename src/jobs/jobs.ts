import type { FastifyInstance } from 'fastify';
import { defaults } from '../config/defaults.js';
import type { AppContext } from '../context.js';
import { every, type Schedule } from '../lib/timer.js';
import { startAuditPruning } from '../modules/orgs/audit-log.service.js';
import { sweepDeletedAccounts } from '../modules/users/account.service.js';
import { webhookQueueStats } from '../modules/webhooks/webhooks.queries.js';
import { webhookWorker } from '../modules/webhooks/webhooks.routes.js';
import { rotateKeysOnSchedule } from '../oidc/key-rotation.js';
import { sweepExpiredTokens } from '../oidc/revocation.js';
import { sweepExpiredProviderStates, sweepExpiredSignin } from '../oidc/signin/sweep.js';

/**
 * Background work of this instance, started with the app and stopped with its context: the sweepers
 * of expired rows (tokens, sign-in, provider link states), the account deletion sweeper, the
 * scheduled key rotation (KEY_ROTATION_DAYS), the audit log pruning, all on the one timer helper (`every`, src/lib/timer.ts), and the webhook delivery
 * worker (its own poll loop; started when the app is ready, stopped when it closes). Called by
 * buildApp before the modules register, so the worker is this app's (with its logger).
 */
export function startJobs(app: FastifyInstance): void {
  const ctx = app.ctx;
  const log = app.log;
  const sweep: Schedule = { everyMs: defaults.tokenSweepInterval * 1000 };
  const schedule = (when: Schedule, run: () => Promise<unknown>, onError: (err: unknown) => void) => {
    const job = every(when, run, onError);
    ctx.hooks.onClose.push(() => job.stop());
  };
  schedule(
    sweep,
    () => sweepExpiredTokens(ctx),
    (err) => log.warn({ err }, 'token sweep failed'),
  );
  schedule(
    sweep,
    () => sweepExpiredSignin(ctx),
    (err) => log.warn({ err }, 'sign-in sweep failed'),
  );
  // Sign-in states go with their interactions; link states (no interaction) are swept here.
  schedule(
    sweep,
    () => sweepExpiredProviderStates(ctx),
    (err) => log.warn({ err }, 'provider state sweep failed'),
  );
  schedule(
    { everyMs: defaults.accountSweepInterval * 1000 },
    () => sweepDeletedAccounts(ctx),
    (err) => log.error({ err }, 'account deletion sweep failed'),
  );
  // KEY_ROTATION_DAYS: every instance checks, the database decides (src/oidc/key-rotation.ts).
  if (ctx.config.keyRotationDays)
    schedule(
      { everyMs: defaults.keyRotationCheckInterval * 1000 },
      () => rotateKeysOnSchedule(ctx),
      (err) => log.error({ err }, 'scheduled key rotation failed'),
    );
  startAuditPruning(ctx, log);
  startWebhookWorker(app, ctx);
}

function startWebhookWorker(app: FastifyInstance, ctx: AppContext): void {
  const worker = webhookWorker(ctx, app.log);
  ctx.metrics.sources.webhookQueue = () => webhookQueueStats(ctx.db, ctx.clock.now());
  app.addHook('onReady', async () => worker.start());
  app.addHook('onClose', async () => worker.close());
}
