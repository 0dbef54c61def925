/**
 * The Lambda entry points: each deployed function's code starts at one of these
 * modules (its exported `handler`), and the function construct
 * (lib/exactly-once/function-defaults.ts) takes a name of this list, so a misspelt
 * entry point fails typecheck, not a bundling step. test/infra/entry-points.test.ts
 * keeps the list and this folder equal, checks that each module exports
 * `handler`, and that each entry point is used by a function of the stack.
 *
 * Data only: the stack reads it at synth, and importing a handler module there
 * would run Lambda code (configuration reads, SDK clients) in the CDK app.
 */
export const ENTRY_POINTS = {
  'create-order': 'create-order.ts',
  'cancel-order': 'cancel-order.ts',
  'get-order': 'get-order.ts',
  'get-customer': 'get-customer.ts',
  'get-inventory': 'get-inventory.ts',
  'outbox-relay': 'outbox-relay.ts',
  'outbox-sweeper': 'outbox-sweeper.ts',
  'fulfilment-consumer': 'fulfilment-consumer.ts',
  'loyalty-consumer': 'loyalty-consumer.ts',
} as const satisfies Record<string, string>;

/** The name of an entry point; also the function's name in its alarms. */
export type EntryPoint = keyof typeof ENTRY_POINTS;
