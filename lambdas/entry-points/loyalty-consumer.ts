import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DynamoDbLoyaltyLedger } from '../adapters/dynamodb-ledgers';
import { PermanentError } from '../domain/errors';
import { parseOrderEvent, type OrderEvent } from '../domain/events';
import { flushMetrics, logger } from '../shared/observability';
import { creditLoyaltyPoints } from '../use-cases/apply-order-events';
import { consumeRecord } from '../handlers/consumer-support';
import { deployedConsumerWiring, type ConsumerWiring } from '../handlers/consumer-wiring';

/**
 * Standard-queue consumer: credits loyalty points and sends the confirmation
 * e-mail. Records are independent, so Powertools processes them in parallel and
 * reports exactly the failed message ids.
 *
 * `makeLoyaltyHandler` is the whole function on given parts (see fulfilment-consumer.ts).
 */
export function makeLoyaltyHandler(wiring: ConsumerWiring) {
  const settings = wiring.settings;
  const ledger = new DynamoDbLoyaltyLedger(wiring.documents, wiring.ledgerOptions);
  const mail = wiring.provider('mail');
  const applyFor = (record: SQSRecord) =>
    wiring.withFaults((e: OrderEvent) => {
      if (e.type !== 'OrderPlaced') {
        throw new PermanentError('UnknownEntity', `Loyalty consumes OrderPlaced only, got ${e.type}`);
      }
      return creditLoyaltyPoints(e, { ledger: wiring.ledgerFor(ledger, record), mail });
    });

  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    await wiring.refreshFaults();
    const processor = new BatchProcessor(EventType.SQS);
    try {
      return await processPartialResponse(
        event,
        (record: SQSRecord) => consumeRecord(record, settings, parseOrderEvent, applyFor(record)),
        processor,
        // Every record failed is still a partial response (all ids), not a thrown error: each
        // record keeps its own backoff, and the batch does not count as a function error.
        { context, throwOnFullBatchFailure: false },
      );
    } finally {
      flushMetrics();
    }
  };
}

export const handler = makeLoyaltyHandler(deployedConsumerWiring({ consumer: 'loyalty', fifo: false }));
