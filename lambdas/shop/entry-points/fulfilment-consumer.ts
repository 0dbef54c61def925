import { DynamoDbFulfilmentLedger, type LegacyFulfilment } from '../aws/ledgers';
import { consumerSpec } from '../consumers';
import { parseOrderEvent } from '../domain/events';
import { SHOP_ENV } from '../env-names';
import { type ConsumerWiring, deployedConsumerWiring, queueConsumerHandler } from '@exactly-once/runtime';
import { optionalEnv } from '@exactly-once/runtime/runtime';
import { fulfilOrderEvent } from '../use-cases/apply-order-events';

const SPEC = consumerSpec('fulfilment');

/**
 * What the consumer runs on: the mechanism's wiring (deployed: `deployedConsumerWiring` of its spec), and
 * which ledger it starts an order on (aws/ledgers.ts LegacyFulfilment; `read` when not given).
 */
export type Parts = ConsumerWiring & { legacyFulfilment?: LegacyFulfilment };

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
export function makeHandler(wiring: Parts) {
  const ledger = new DynamoDbFulfilmentLedger(wiring.documents, wiring.ledgerOptions, wiring.legacyFulfilment);
  const warehouse = wiring.provider('warehouse');
  return queueConsumerHandler(wiring, {
    fifo: SPEC.fifo,
    parse: parseOrderEvent,
    apply: (event, _record, work) => fulfilOrderEvent(event, { ledger, warehouse }, work),
  });
}

/** The deployed parts: the wiring its environment names (read once, at cold start). */
export function partsFromEnv(): Parts {
  return { ...deployedConsumerWiring(SPEC), legacyFulfilment: legacyFulfilmentFromEnv() };
}

/**
 * Which ledger fulfilment starts an order on and reads for the other's orders (`FULFILMENT_LEGACY_LEDGER`: `read`, the default when
 * unset, `off` or `write`: aws/ledgers.ts LegacyFulfilment), read once at cold start; any other value fails the cold start, naming the variable, so
 * a typo cannot switch the transition window off (docs/runbook.md, upgrade).
 */
export function legacyFulfilmentFromEnv(): LegacyFulfilment {
  const value = optionalEnv(SHOP_ENV.fulfilmentLegacyLedger, 'read');
  if (value === 'read' || value === 'off' || value === 'write') return value;
  throw new Error(`${SHOP_ENV.fulfilmentLegacyLedger} must be 'read', 'off' or 'write', not '${value}'`);
}
