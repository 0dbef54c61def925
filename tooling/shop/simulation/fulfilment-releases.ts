import { type ConsumerWiring, queueConsumerHandler } from '@exactly-once/runtime';
import { InboxFulfilmentLedger, type LegacyFulfilment } from '../../../lambdas/shop/aws/ledgers';
import { consumerSpec } from '../../../lambdas/shop/consumers';
import { parseOrderEvent } from '../../../lambdas/shop/domain/events';
import { fulfilOrderEvent } from '../../../lambdas/shop/use-cases/apply-order-events';
// Imported whole: an `import { makeHandler } from` line would make the simulation load that module instead.
import * as fulfilment from '../../../lambdas/shop/entry-points/fulfilment-consumer';

/**
 * Fulfilment's releases in the simulation (the engine's releases.ts says which release an invocation runs;
 * the consumer's wiring says it by the ledger keys it hands over: `find: [1]` or `[2]` is a previous
 * release). The releases before this one ran fulfilment on the transactional inbox alone, reading no
 * sequenced item, so that is what a previous release runs here: a deploy window and a rollback meet the
 * state a real previous release leaves and reads. This release runs the deployed default (`'read'`), or,
 * as the first step of the rollback-safe upgrade (the ledgers' keys `{ write: 2 }`), `'write'`.
 */
export function makeHandler(wiring: ConsumerWiring) {
  return fulfilmentReleases(wiring);
}

/**
 * The releases, with this release's mode given: `'off'` is the test-only change the legacy read's guard
 * stands for (fulfilment-without-legacy-read.ts).
 */
export function fulfilmentReleases(wiring: ConsumerWiring, current?: LegacyFulfilment) {
  const { keys } = wiring.ledgerOptions;
  const previous = keys?.find?.length === 1 && (keys.find[0] === 1 || keys.find[0] === 2);
  if (!previous)
    return fulfilment.makeHandler({
      ...wiring,
      legacyFulfilment: current ?? (keys?.write === 2 ? 'write' : 'read'),
    });
  const ledger = new InboxFulfilmentLedger(wiring.documents, { ...wiring.ledgerOptions, ledger: 'inbox' });
  const warehouse = wiring.provider('warehouse');
  return queueConsumerHandler(wiring, {
    fifo: consumerSpec('fulfilment').fifo,
    parse: parseOrderEvent,
    apply: (event, _record, work) => fulfilOrderEvent(event, { ledger, warehouse }, work),
  });
}
