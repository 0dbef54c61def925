import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DynamoDbLoyaltyLedger } from '../adapters/dynamodb-ledgers';
import { PermanentError } from '../domain/errors';
import { flushMetrics, logger } from '../shared/observability';
import { creditLoyaltyPoints } from '../use-cases/apply-order-events';
import { consumeRecord } from './consumer-support';
import { consumerWiring } from './consumer-wiring';

/**
 * Standard-queue consumer: credits loyalty points and sends the confirmation
 * e-mail. Records are independent, so Powertools processes them in parallel and
 * reports exactly the failed message ids.
 */
const wiring = consumerWiring({ consumer: 'loyalty', fifo: false });
const settings = wiring.settings;
const deps = {
  ledger: new DynamoDbLoyaltyLedger(wiring.documents, wiring.ledgerOptions),
  mail: wiring.provider('mail'),
};

export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  logger.addContext(context);
  const faults = await wiring.refreshFaults();
  const processor = new BatchProcessor(EventType.SQS);
  try {
    return await processPartialResponse(
      event,
      (record: SQSRecord) =>
        consumeRecord(
          record,
          settings,
          (e) => {
            if (e.eventType !== 'OrderPlaced') {
              throw new PermanentError('UnknownEntity', `Loyalty consumes OrderPlaced only, got ${e.eventType}`);
            }
            return creditLoyaltyPoints(e, deps);
          },
          faults,
        ),
      processor,
      // Every record failed is still a partial response (all ids), not a thrown error: each
      // record keeps its own backoff, and the batch does not count as a function error.
      { context, throwOnFullBatchFailure: false },
    );
  } finally {
    flushMetrics();
  }
};
