import { DynamoDbLoyaltyLedger } from '../aws/ledgers';
import { consumerSpec } from '../consumers';
import {
  type ConsumerWiring,
  deployedConsumerWiring,
  PermanentError,
  queueConsumerHandler,
} from '@exactly-once/runtime';
import { parseOrderEvent } from '../domain/events';
import { creditLoyaltyPoints } from '../use-cases/apply-order-events';

const SPEC = consumerSpec('loyalty');

/** What the consumer runs on: the mechanism's wiring (deployed: `deployedConsumerWiring` of its spec). */
export type Parts = ConsumerWiring;

/**
 * Standard-queue consumer: credits loyalty points and sends the confirmation
 * e-mail. Records are independent, so they are processed in parallel
 * (queue-consumer.ts).
 *
 * `makeHandler` is the whole function on given parts: the deployed binding
 * (handlers/loyalty-consumer.ts) gives it `partsFromEnv()`, the simulation one
 * simulated invocation's.
 */
export function makeHandler(wiring: ConsumerWiring) {
  const ledger = new DynamoDbLoyaltyLedger(wiring.documents, wiring.ledgerOptions);
  const mail = wiring.provider('mail');
  return queueConsumerHandler(wiring, {
    fifo: SPEC.fifo,
    parse: parseOrderEvent,
    apply: (event, _record, work) => {
      if (event.type !== 'OrderPlaced') {
        throw new PermanentError('UnsupportedEventType', `Loyalty consumes OrderPlaced only, got ${event.type}`);
      }
      return creditLoyaltyPoints(event, { ledger, mail }, work);
    },
  });
}

/** The deployed parts: the wiring its environment names (read once, at cold start). */
export function partsFromEnv(): Parts {
  return deployedConsumerWiring(SPEC);
}
