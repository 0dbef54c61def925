import { DynamoDbFulfilmentLedger } from '../aws/ledgers';
import { consumerSpec } from '../consumers';
import { parseOrderEvent } from '../domain/events';
import { type ConsumerWiring, deployedConsumerWiring, queueConsumerHandler } from '@exactly-once/runtime';
import { fulfilOrderEvent } from '../use-cases/apply-order-events';

const SPEC = consumerSpec('fulfilment');

/** What the consumer runs on: the mechanism's wiring (deployed: `deployedConsumerWiring` of its spec). */
export type Parts = ConsumerWiring;

/**
 * FIFO consumer: reserves and releases stock. One order's events are applied
 * in order: the FIFO processor stops a failed record's group (queue-consumer.ts).
 *
 * Retry budget on FIFO: a record skipped behind a failure is received, and
 * counted by SQS, without being tried. So the consumer counts its own failed
 * tries (consume-record.ts in the mechanism, tryLimit) and dead-letters a record itself once they
 * are spent; the queue's maxReceiveCount is set far higher (tries x batch size)
 * as a backstop for crashes. A record behind a failing head therefore waits,
 * untried, however long the head takes, and is tried once the head is applied
 * or has gone to the DLQ.
 *
 * `makeHandler` is the whole function on given parts: the deployed binding
 * (handlers/fulfilment-consumer.ts) gives it `partsFromEnv()`, the simulation one
 * simulated invocation's.
 */
export function makeHandler(wiring: ConsumerWiring) {
  const ledger = new DynamoDbFulfilmentLedger(wiring.documents, wiring.ledgerOptions);
  const warehouse = wiring.provider('warehouse');
  return queueConsumerHandler(wiring, {
    fifo: SPEC.fifo,
    parse: parseOrderEvent,
    apply: (event, _record, work) => fulfilOrderEvent(event, { ledger, warehouse }, work),
  });
}

/** The deployed parts: the wiring its environment names (read once, at cold start). */
export function partsFromEnv(): Parts {
  return deployedConsumerWiring(SPEC);
}
