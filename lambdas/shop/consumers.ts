import { ORDER_EVENT_TYPES } from './domain/events';
import { type ConsumerSpec, validateConsumerSpecs } from '@exactly-once/runtime';

/**
 * Who consumes what: the one list the stack, the relay's routing, the proof
 * kit and the simulation are built from (packages/runtime/src/consumer-spec.ts).
 * `npm run new:consumer -- <name> [--fifo]` adds an entry here.
 *
 * - fulfilment: FIFO (group = orderId), so an order's events arrive in order;
 *   reserves stock on OrderPlaced and releases it on OrderCancelled. Its effect is one item per
 *   order, so its claims live on that item (`ledger: 'sequenced'`): no inbox item, no dedupe horizon.
 * - loyalty: standard queue, parallel; credits points on OrderPlaced.
 * Each names the external provider its effect calls (warehouse: PICK / CANCEL_PICK; mail: the
 * order's confirmation e-mail); the stage configures where each one is (lib/config.ts).
 */
export const CONSUMERS = [
  {
    name: 'fulfilment',
    fifo: true,
    eventTypes: ['OrderPlaced', 'OrderCancelled'],
    entry: 'lambdas/shop/handlers/fulfilment-consumer.ts',
    providers: ['warehouse'],
    ledger: 'sequenced',
    batchSize: 10,
    batchingWindowSeconds: 0,
    maxConcurrency: 10,
  },
  {
    name: 'loyalty',
    fifo: false,
    eventTypes: ['OrderPlaced'],
    entry: 'lambdas/shop/handlers/loyalty-consumer.ts',
    providers: ['mail'],
    batchSize: 10,
    // No batching window: at light load a 1 s window was most of the effect's lag (accepted -> effect p50
    // 2.3 s, 1.3 s without; docs/benchmarks.md). A busy queue fills its batches of 10 without one.
    batchingWindowSeconds: 0,
    maxConcurrency: 10,
  },
  // new:consumer inserts above this line
] as const satisfies readonly ConsumerSpec[];

export type ConsumerName = (typeof CONSUMERS)[number]['name'];

validateConsumerSpecs(CONSUMERS, ORDER_EVENT_TYPES);

/** The spec of a consumer on the list (a name not on it fails typecheck). */
export function consumerSpec(name: ConsumerName): ConsumerSpec {
  const spec = CONSUMERS.find((c) => c.name === name);
  if (spec === undefined) throw new Error(`No consumer named ${name}`);
  return spec;
}
