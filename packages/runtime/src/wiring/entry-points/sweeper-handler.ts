import type { Context } from 'aws-lambda';
import { requireIntEnv } from '../../config';
import { flushMetrics, logger, metrics, MetricUnit } from '../../runtime/observability';
import { sweepOutbox } from '../../outbox/relay';
import { deployedOutboxWiring, type OutboxWiring } from '../outbox-wiring';
import { ENV } from '../../env-names';

/** Most pending items one sweep republishes; the next sweep, a minute later, takes the rest. */
export const SWEEP_MAX_ITEMS = 500;
/** Most set-aside (malformed) items one sweep re-checks: it reports them again, or publishes the repaired ones. */
export const SWEEP_MAX_SET_ASIDE = 100;

/**
 * What the sweeper runs on: the outbox's wiring, and how old a pending item must be before it is republished.
 *
 * @example
 * ```ts
 * const parts: Parts = { wiring: outboxWiring(config, { documents, sqs }), minAgeSeconds: 300 };
 * ```
 */
export interface Parts {
  wiring: OutboxWiring;
  minAgeSeconds: number;
}

/**
 * Scheduled safety net: the stream keeps records 24 h and the relay gives up on
 * a record after its retries; anything still undispatched after
 * OUTBOX_SWEEP_AGE_SECONDS is republished here. Publishes the age of the oldest
 * undispatched item (`OldestUndispatchedOutboxAgeSeconds`), which is alarmed,
 * and the number of unpublishable items it set aside or found still set aside
 * (`MalformedOutboxItem`, alarmed on the first): every sweep counts the
 * set-aside items again (up to SWEEP_MAX_SET_ASIDE), so the alarm stays on
 * until each is repaired (the next sweep publishes it) or removed.
 *
 * `makeHandler` is the whole function on given parts: the deployed binding
 * (handlers/sweeper-handler.ts) gives it `partsFromEnv()`, the simulation one
 * simulated invocation's.
 *
 * @example
 * ```ts
 * const sweep = makeHandler({ wiring: outboxWiring(config, { documents, sqs }), minAgeSeconds: 300 });
 * const { republished } = await sweep(undefined, context);
 * ```
 */
export function makeHandler({ wiring, minAgeSeconds }: Parts) {
  const deps = {
    ...wiring,
    minAgeSeconds,
    maxItems: SWEEP_MAX_ITEMS,
    maxSetAside: SWEEP_MAX_SET_ASIDE,
  };

  return async (_event: unknown, context: Context) => {
    logger.addContext(context);
    try {
      const result = await sweepOutbox(deps);
      const { malformed, ...counts } = result;
      metrics.addMetric('OutboxEventsSwept', MetricUnit.Count, result.republished);
      metrics.addMetric('OldestUndispatchedOutboxAgeSeconds', MetricUnit.Seconds, result.oldestPendingAgeSeconds);
      // Same namespace and dimensions as the age metric; published every sweep (0 included) so its alarm has data.
      metrics.addMetric('MalformedOutboxItem', MetricUnit.Count, malformed.length);
      for (const item of malformed)
        logger.error(
          item.setAside
            ? 'Malformed outbox item set aside; it needs repair'
            : 'Malformed outbox item could not be set aside; the next sweep tries again',
          { ...item },
        );
      if (result.republished > 0 || result.failed > 0) logger.warn('Outbox sweep republished events', { ...counts });
      // A failed republish must surface (async DLQ, errors alarm), not vanish; a malformed item never will, so it does not throw.
      if (result.failed > 0) throw new Error(`${result.failed} outbox events could not be republished`);
      return result;
    } finally {
      flushMetrics();
    }
  };
}

/**
 * The deployed parts: the outbox wiring and sweep age its environment names (read once, at cold start; a missing variable throws, naming it).
 *
 * @example The deployed binding (handlers/sweeper-handler.ts)
 * ```ts
 * export const handler = makeHandler(partsFromEnv());
 * ```
 */
export function partsFromEnv(): Parts {
  return { wiring: deployedOutboxWiring(), minAgeSeconds: requireIntEnv(ENV.outboxSweepAgeSeconds) };
}
