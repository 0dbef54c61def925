import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DynamoDbFulfilmentLedger } from '../adapters/dynamodb-ledgers';
import { parseOrderEvent, type OrderEvent } from '../domain/events';
import { flushMetrics, logger } from '../shared/observability';
import { fulfilOrderEvent } from '../use-cases/apply-order-events';
import { consumeRecord, type ConsumerSettings } from '../handlers/consumer-support';
import { deployedConsumerWiring, type ConsumerWiring } from '../handlers/consumer-wiring';

/**
 * FIFO consumer: reserves and releases stock. SqsFifoPartialProcessorAsync handles
 * records one at a time and, after a failure, fails the rest of that message
 * group (skipGroupOnError), so an order's events are never applied out of order.
 *
 * Retry budget on FIFO: a record skipped behind a failure is received, and
 * counted by SQS, without being tried. So the consumer counts its own failed
 * tries (consumer-support, tryLimit) and dead-letters a record itself once they
 * are spent; the queue's maxReceiveCount is set far higher (tries x batch size)
 * as a backstop for crashes. A record behind a failing head therefore waits,
 * untried, however long the head takes, and is tried once the head is applied
 * or has gone to the DLQ.
 *
 * `makeFulfilmentHandler` is the whole function on given parts: the deployed
 * handler below builds them from its environment, the simulation from one
 * simulated invocation's.
 */
export function makeFulfilmentHandler(wiring: ConsumerWiring) {
  const settings = wiring.settings;
  const ledger = new DynamoDbFulfilmentLedger(wiring.documents, wiring.ledgerOptions);
  const warehouse = wiring.provider('warehouse');
  const applyFor = (record: SQSRecord) =>
    wiring.withFaults((e: OrderEvent) => fulfilOrderEvent(e, { ledger: wiring.ledgerFor(ledger, record), warehouse }));

  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    await wiring.refreshFaults();
    const processor = new SqsFifoPartialProcessorAsync();
    const attempted = new Set<string>();
    try {
      const response = await processPartialResponse(
        event,
        (record: SQSRecord) => {
          attempted.add(record.messageId);
          return consumeRecord(record, settings, parseOrderEvent, applyFor(record));
        },
        processor,
        // Only the failed record's own group stops; other orders' groups go on. A batch in which
        // every record fails is reported record by record too: thrown, it would skip the release
        // below (the group would stay locked for the whole visibility timeout) and count as a
        // function error, which is what the errors alarm watches.
        { context, skipGroupOnError: true, throwOnFullBatchFailure: false },
      );
      await releaseSkipped(event, response, attempted, settings);
      return response;
    } finally {
      flushMetrics();
    }
  };
}

export const handler = makeFulfilmentHandler(deployedConsumerWiring({ consumer: 'fulfilment', fifo: true }));

/**
 * Records skipped behind a failure in their group were never tried: make them
 * visible again now instead of after the full visibility timeout. FIFO still
 * holds them back until the failed message ahead of them (invisible for its
 * backoff) is done, so the order's events keep their order.
 */
async function releaseSkipped(
  event: SQSEvent,
  response: SQSBatchResponse,
  attempted: Set<string>,
  settings: ConsumerSettings,
): Promise<void> {
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  const skipped = event.Records.filter((r) => failed.has(r.messageId) && !attempted.has(r.messageId));
  await Promise.all(
    skipped.map((r) =>
      settings.control
        .changeVisibility(r.receiptHandle, 0)
        .catch((error) => logger.warn('Could not release a skipped record', { error })),
    ),
  );
}
