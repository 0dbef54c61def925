import type { Context } from 'aws-lambda';
import { requireIntEnv } from '../shared/config';
import { flushMetrics, logger, metrics, MetricUnit } from '../shared/observability';
import { sweepOutbox } from '../use-cases/relay-outbox';
import { outboxWiring } from './outbox-wiring';

/**
 * Scheduled safety net: the stream keeps records 24 h and the relay gives up on
 * a record after its retries; anything still undispatched after
 * OUTBOX_SWEEP_AGE_SECONDS is republished here. Publishes the age of the oldest
 * undispatched item (`OldestUndispatchedOutboxAgeSeconds`), which is alarmed.
 */
const deps = {
  ...outboxWiring(),
  minAgeSeconds: requireIntEnv('OUTBOX_SWEEP_AGE_SECONDS'),
  maxItems: 500,
};

export const handler = async (_event: unknown, context: Context) => {
  logger.addContext(context);
  try {
    const result = await sweepOutbox(deps);
    metrics.addMetric('OutboxEventsSwept', MetricUnit.Count, result.republished);
    metrics.addMetric('OldestUndispatchedOutboxAgeSeconds', MetricUnit.Seconds, result.oldestPendingAgeSeconds);
    if (result.republished > 0 || result.failed > 0) logger.warn('Outbox sweep republished events', { ...result });
    // A failed republish must surface (async DLQ, errors alarm), not vanish.
    if (result.failed > 0) throw new Error(`${result.failed} outbox events could not be republished`);
    return result;
  } finally {
    flushMetrics();
  }
};
