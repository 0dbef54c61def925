import { IDENTIFIER_RULE } from '../domain/order';
import { effectReadHandler } from '../api/effect-read-handler';
import { callerRuleFromEnv } from '@exactly-once/runtime/api';
import { orderRepositoryFromEnv } from '../api/order-request';
import { getCustomerPoints } from '../use-cases/get-customer';

/**
 * GET /customers/{customerId}: loyalty points, the loyalty consumer's effect,
 * for the callers who placed orders for the customer only. To any other caller
 * the customer is 404, word for word what an unknown customer gets.
 */
const orders = orderRepositoryFromEnv();

export const handler = effectReadHandler({
  parameter: 'customerId',
  // The ids an order accepts: no other customer can exist, and the access key relies on it (order-table.ts).
  ...IDENTIFIER_RULE,
  title: 'Invalid customer id',
  scope: 'caller',
  callerRule: callerRuleFromEnv(),
  read: (effects, customerId, caller) => getCustomerPoints({ orders, effects }, { caller, customerId }),
  body: (customerId, points) => ({ customerId, points }),
  missing: (customerId) => `Customer ${customerId} has no points yet, or none of your orders is for it.`,
});
