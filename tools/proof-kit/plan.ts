import { intBetween, pick, type Random } from './random';

/**
 * The request plan: what the load generator sends, decided up front from the
 * seed. Operations:
 * - new: a new order under a new Idempotency-Key;
 * - retry-sequential: the same key and body again, after the first answered;
 * - retry-concurrent: the same key and body, sent right behind the first, so
 *   both are in flight at once (another connection picks it up);
 * - cancel: cancel an order placed earlier in the plan;
 * - read: GET an order, a customer or a SKU.
 */
export type Operation = 'new' | 'retry-sequential' | 'retry-concurrent' | 'cancel' | 'read';

export interface OrderBody {
  customerId: string;
  items: { sku: string; quantity: number; unitPriceCents: number }[];
}

export interface PlannedRequest {
  index: number;
  op: Operation;
  caller: string;
  method: 'GET' | 'POST';
  path: string;
  idempotencyKey?: string;
  body?: OrderBody;
  /** For cancels and order reads: the key of the order concerned. */
  orderKey?: string;
}

export interface Mix {
  new: number;
  retrySequential: number;
  retryConcurrent: number;
  cancel: number;
  read: number;
}

export const DEFAULT_MIX: Mix = { new: 0.6, retrySequential: 0.1, retryConcurrent: 0.1, cancel: 0.1, read: 0.1 };

export interface PlanOptions {
  orders: number;
  mix: Mix;
  callers: string[];
  customers: number;
  skus: number;
  runId: string;
  /** Maps (caller, key) to the order id the API will assign (deterministic by design). */
  orderIdOf: (caller: string, key: string) => string;
}

/** Builds a plan that places exactly `orders` new orders, with the mix's other operations around them. */
export function buildPlan(random: Random, options: PlanOptions): PlannedRequest[] {
  const plan: PlannedRequest[] = [];
  const placed: { caller: string; key: string; body: OrderBody }[] = [];
  const cancellable: { caller: string; key: string }[] = [];
  const add = (request: Omit<PlannedRequest, 'index'>) => plan.push({ ...request, index: plan.length });
  const others = options.mix.retrySequential + options.mix.retryConcurrent + options.mix.cancel + options.mix.read;
  const othersPerNew = options.mix.new > 0 ? others / options.mix.new : 0;

  for (let n = 0; n < options.orders; n++) {
    const caller = pick(random, options.callers);
    const key = `${options.runId}-${n}`;
    const body: OrderBody = {
      customerId: `${options.runId}-cust-${intBetween(random, 1, options.customers)}`,
      items: Array.from({ length: intBetween(random, 1, 3) }, (_, i) => ({
        sku: `${options.runId}-sku-${intBetween(random, 1, options.skus)}-${i}`,
        quantity: intBetween(random, 1, 5),
        unitPriceCents: intBetween(random, 50, 5_000),
      })),
    };
    add({ op: 'new', caller, method: 'POST', path: '/orders', idempotencyKey: key, body });
    placed.push({ caller, key, body });
    cancellable.push({ caller, key });

    // The other operations, in proportion to the mix.
    let budget = othersPerNew + random() - 0.5;
    while (budget >= 0.5) {
      budget -= 1;
      const r = random() * others;
      if (r < options.mix.retryConcurrent) {
        add({ op: 'retry-concurrent', caller, method: 'POST', path: '/orders', idempotencyKey: key, body });
      } else if (r < options.mix.retryConcurrent + options.mix.retrySequential) {
        const earlier = pick(random, placed);
        add({
          op: 'retry-sequential',
          caller: earlier.caller,
          method: 'POST',
          path: '/orders',
          idempotencyKey: earlier.key,
          body: earlier.body,
        });
      } else if (
        r < options.mix.retryConcurrent + options.mix.retrySequential + options.mix.cancel &&
        cancellable.length > 1
      ) {
        // Never the order just placed: its create may still be in flight.
        const [target] = cancellable.splice(intBetween(random, 0, cancellable.length - 2), 1);
        add({
          op: 'cancel',
          caller: target.caller,
          method: 'POST',
          path: `/orders/${options.orderIdOf(target.caller, target.key)}/cancel`,
          orderKey: target.key,
        });
      } else {
        const earlier = pick(random, placed);
        const what = random();
        const path =
          what < 0.34
            ? `/orders/${options.orderIdOf(earlier.caller, earlier.key)}`
            : what < 0.67
              ? `/customers/${encodeURIComponent(earlier.body.customerId)}`
              : `/inventory/${encodeURIComponent(earlier.body.items[0].sku)}`;
        add({ op: 'read', caller: earlier.caller, method: 'GET', path, orderKey: earlier.key });
      }
    }
  }
  return plan;
}
