import { callerRuleFromEnv, type CallerRule } from '@exactly-once/runtime/api';
import { IDENTIFIER_RULE } from '../domain/order';
import { effectReadHandler, effectsReaderFromEnv } from '../api/effect-read-handler';
import { orderRepositoryFromEnv } from '../api/order-request';
import type { EffectsReader } from '../ports/ledgers';
import type { OrderRepository } from '../ports/order-repository';
import { getCustomerPoints } from '../use-cases/get-customer';

/** What GET /customers/{customerId} runs on (deployed: `partsFromEnv`, below). */
export interface Parts {
  orders: OrderRepository;
  effects: EffectsReader;
  /** Which role sessions are people (packages/runtime/src/api/caller.ts). */
  callerRule: CallerRule;
}

/**
 * GET /customers/{customerId}: loyalty points, the loyalty consumer's effect,
 * for the callers who placed orders for the customer only. To any other caller
 * the customer is 404, word for word what an unknown customer gets.
 */
export function makeHandler({ orders, effects, callerRule }: Parts) {
  return effectReadHandler({
    reader: effects,
    parameter: 'customerId',
    // The ids an order accepts: no other customer can exist, and the access key relies on it (order-table.ts).
    ...IDENTIFIER_RULE,
    title: 'Invalid customer id',
    scope: 'caller',
    callerRule,
    read: (reader, customerId, caller) => getCustomerPoints({ orders, effects: reader }, { caller, customerId }),
    body: (customerId, points) => ({ customerId, points }),
    missing: (customerId) => `Customer ${customerId} has no points yet, or none of your orders is for it.`,
  });
}

/** The deployed parts, from the environment the stack sets: read once, at cold start. */
export function partsFromEnv(): Parts {
  return { orders: orderRepositoryFromEnv(), effects: effectsReaderFromEnv(), callerRule: callerRuleFromEnv() };
}
