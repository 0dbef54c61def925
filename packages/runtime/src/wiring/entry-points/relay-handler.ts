import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { outboxEventOf } from '../../aws/outbox-stream-record';
import type { EventEnvelope } from '../../envelope';
import { checkOutboxEvent } from '../../outbox/outbox-event';
import { flushMetrics, logger, metrics, MetricUnit } from '../../runtime/observability';
import { relayOutboxEvents } from '../../outbox/relay';
import { relayFaults } from '../../faults/relay-faults';
import { deployedOutboxWiring, type OutboxWiring } from '../outbox-wiring';

/** The relay's fault hooks (faults/relay-faults.ts in bundles built with fault injection; the simulation's own). */
export interface RelayFaults {
  refresh(): Promise<unknown>;
  wire(wiring: OutboxWiring): OutboxWiring;
  afterRelay(firstDispatches: number): void;
}

/**
 * What the relay runs on: the outbox's wiring, and the fault-injection build's hooks where there are any.
 *
 * @example One simulated invocation's parts
 * ```ts
 * const parts: Parts = { wiring: outboxWiring(config, { documents, sqs, now }) };
 * ```
 */
export interface Parts {
  wiring: OutboxWiring;
  faults?: RelayFaults;
}

/**
 * Outbox relay on the outbox table's stream. The event source mapping's filter
 * admits only INSERTs of outbox items; the relay publishes them and reports
 * exactly the records it could not publish, by sequence number, so Lambda
 * retries from the first of them (bisecting, then the on-failure queue). An
 * item that can never be published is skipped and counted instead (below).
 *
 * `makeHandler` is the whole function on given parts: the deployed binding
 * (handlers/relay-handler.ts) gives it `partsFromEnv()`, the simulation one
 * simulated invocation's.
 *
 * @example
 * ```ts
 * const relay = makeHandler({ wiring: outboxWiring(config, { documents, sqs }) });
 * const { batchItemFailures } = await relay(streamEvent, context);
 * ```
 */
export function makeHandler({ wiring, faults }: Parts) {
  const deps = faults?.wire(wiring) ?? wiring;

  return async (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> => {
    logger.addContext(context);
    try {
      const failures: string[] = [];
      const relayable: { record: DynamoDBRecord; event: EventEnvelope }[] = [];
      let malformed = 0;
      for (const record of event.Records) {
        const outboxEvent = outboxEventOf(record);
        if (outboxEvent === 'not-outbox') continue; // the filter should not have let it in; nothing to relay
        const check =
          outboxEvent === 'malformed'
            ? { ok: false as const, reason: 'The outbox item has no readable event.' }
            : checkOutboxEvent(outboxEvent);
        if (!check.ok) {
          // It would fail on every retry, holding the shard behind it through all of them. Skipped, as the
          // sweeper skips it: it stays pending, and the sweeper reports it every minute until it is repaired.
          logger.error('Malformed outbox item skipped; it needs repair', {
            sequenceNumber: record.dynamodb?.SequenceNumber,
            reason: check.reason,
          });
          malformed += 1;
          continue;
        }
        relayable.push({ record, event: check.event });
      }
      if (malformed > 0) metrics.addMetric('MalformedOutboxItem', MetricUnit.Count, malformed);

      await faults?.refresh();
      let firstDispatches = 0;
      const failedIds = await relayOutboxEvents(
        relayable.map((r) => r.event),
        { ...deps, onFirstDispatch: () => (firstDispatches += 1) },
      );
      faults?.afterRelay(firstDispatches);
      for (const { record, event: e } of relayable)
        if (failedIds.has(e.eventId)) failures.push(sequenceNumberOf(record));

      metrics.addMetric('OutboxEventsRelayed', MetricUnit.Count, relayable.length - failedIds.size);
      if (failures.length > 0) logger.warn('Some outbox records were not relayed', { failures });
      return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
    } finally {
      flushMetrics();
    }
  };
}

/**
 * The deployed parts: the outbox wiring its environment names (read once, at cold start; a missing variable throws, naming it).
 *
 * @example The deployed binding (handlers/relay-handler.ts)
 * ```ts
 * export const handler = makeHandler(partsFromEnv());
 * ```
 */
export function partsFromEnv(): Parts {
  return {
    wiring: deployedOutboxWiring(),
    // Only bundles built with fault injection have it; in every other bundle this is dead code, dropped (bundleDefines, packages/cdk/src/function-defaults.ts).
    faults: process.env.FAULT_INJECTION_BUILD === 'true' ? relayFaults() : undefined,
  };
}

function sequenceNumberOf(record: DynamoDBRecord): string {
  const sequenceNumber = record.dynamodb?.SequenceNumber;
  if (sequenceNumber === undefined) throw new Error('Stream record without a sequence number');
  return sequenceNumber;
}
