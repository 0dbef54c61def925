import { providerKey } from '@exactly-once/runtime';
import { sequencedEntityKey } from '@exactly-once/runtime/aws';
import {
  keyedProviderLine,
  type EntityItem,
  type ProducedEvent,
  type ProofDomain,
  type Violation,
} from '@exactly-once/tools/proof-kit/domain';
import type { PlannedRequest, PlanOptions } from '@exactly-once/tools/proof-kit/plan';
import { intBetween, pick, type Random } from '@exactly-once/tools/proof-kit/random';
import { customerKey, fulfilmentKey, inventoryKey } from '../../lambdas/shop/aws/effects-table';
import { ENTITY_ORDER } from '../../lambdas/shop/aws/order-table';
import type { ConsumerName } from '../../lambdas/shop/consumers';
import {
  deriveOrderId,
  loyaltyPoints,
  orderCancelledEventId,
  orderPlacedEventId,
  orderTotalCents,
} from '../../lambdas/shop/domain/order';
import {
  orderCancelledEvent,
  orderPlacedEvent,
  type OrderEvent,
  type OrderPlacedEvent,
} from '../../lambdas/shop/domain/events';

/**
 * What the proof kit (packages/tools/src/proof-kit) knows of the shop: the orders a run places, cancels and reads,
 * the events they produce, and the invariants on stock, points and the warehouse. The kit's own
 * invariants (each event once per consumer, every owed provider key performed once, dead letters,
 * the outbox drained) need nothing from here.
 */

/** An order as the Orders table holds it, the fields the invariants read. */
export type OrderItem = {
  orderId: string;
  status: string;
  /** Who placed it: the tenant its events carry, and so whose customer earns its points. */
  caller: string;
  customerId: string;
  items: { sku: string; quantity: number; unitPriceCents: number }[];
  totalCents: number;
};

/** A POST /orders body of the plan. */
export type OrderBody = {
  customerId: string;
  items: { sku: string; quantity: number; unitPriceCents: number }[];
};

/**
 * The request plan: `orders` new orders under new keys, with the mix's other operations around them
 * (a retry of an earlier key, sequential or right behind the first, a cancel of an earlier order, a
 * GET of an order, a customer or a SKU). Customers and SKUs carry the run id, as the kit requires.
 */
export function buildOrderPlan(random: Random, options: PlanOptions): PlannedRequest[] {
  const plan: PlannedRequest[] = [];
  const placed: { caller: string; key: string; body: OrderBody }[] = [];
  const cancellable: { caller: string; key: string }[] = [];
  const add = (request: Omit<PlannedRequest, 'index'>) => plan.push({ ...request, index: plan.length });
  const others = options.mix.retrySequential + options.mix.retryConcurrent + options.mix.cancel + options.mix.read;
  const othersPerNew = options.mix.new > 0 ? others / options.mix.new : 0;

  for (let n = 0; n < options.intents; n++) {
    const caller = pick(random, options.callers);
    const key = `${options.runId}-${n}`;
    const body: OrderBody = {
      customerId: `${options.runId}-cust-${intBetween(random, 1, options.parties)}`,
      items: Array.from({ length: intBetween(random, 1, 3) }, (_, i) => ({
        sku: `${options.runId}-sku-${intBetween(random, 1, options.resources)}-${i}`,
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
          path: `/orders/${options.entityIdOf(target.caller, target.key)}/cancel`,
          entityKey: target.key,
        });
      } else {
        const earlier = pick(random, placed);
        const what = random();
        const path =
          what < 0.34
            ? `/orders/${options.entityIdOf(earlier.caller, earlier.key)}`
            : what < 0.67
              ? `/customers/${encodeURIComponent(earlier.body.customerId)}`
              : `/inventory/${encodeURIComponent(earlier.body.items[0].sku)}`;
        add({ op: 'read', caller: earlier.caller, method: 'GET', path, entityKey: earlier.key });
      }
    }
  }
  return plan;
}

/**
 * OrderPlaced for every order, OrderCancelled for a cancelled one: the only place the kit learns which
 * events an order makes. Each rebuilt whole by the shop's own constructors from the stored order (the
 * schema's fields only), so the kit can check that every claim holds this content.
 */
export function orderEvents(entities: readonly EntityItem[]): ProducedEvent[] {
  return (entities as unknown as OrderItem[]).flatMap((order) => {
    // An order's events carry its caller as their tenant (part of every inbox key), and their order's
    // version (OrderPlaced 1, OrderCancelled 2, as the events are built): fulfilment's sequenced claims are
    // judged by it, even for an item without its lines.
    const keys = (eventId: string, type: OrderEvent['type']) => ({
      eventId,
      type,
      entityId: order.orderId,
      tenant: order.caller,
      version: type === 'OrderPlaced' ? 1 : 2,
    });
    const placed = keys(orderPlacedEventId(order.orderId), 'OrderPlaced');
    const cancelled =
      order.status === 'CANCELLED' ? [keys(orderCancelledEventId(order.orderId), 'OrderCancelled')] : [];
    // An item without its lines (a hand-written fixture) is judged by its keys alone.
    if (!Array.isArray(order.items)) return [placed, ...cancelled];
    const facts = {
      orderId: order.orderId,
      customerId: order.customerId,
      caller: order.caller,
      items: order.items.map(({ sku, quantity, unitPriceCents }) => ({ sku, quantity, unitPriceCents })),
    };
    return [
      { ...placed, event: orderPlacedEvent({ ...facts, totalCents: order.totalCents }, STAMP_NOT_FINGERPRINTED) },
      ...cancelled.map((c) => ({ ...c, event: orderCancelledEvent(facts, STAMP_NOT_FINGERPRINTED) })),
    ];
  });
}

/** The fingerprint leaves occurredAt out: any stamp will do for a rebuilt event. */
const STAMP_NOT_FINGERPRINTED = '1970-01-01T00:00:00.000Z';

/**
 * For the `forged-first` fault: the OrderPlaced a planned POST /orders will produce (its id derives
 * from the caller and the key), with one more of its first line and the total to match.
 */
export function forgedOrderPlaced(request: PlannedRequest, occurredAt: string): OrderPlacedEvent | undefined {
  const body = request.body as OrderBody | undefined;
  if (request.op !== 'new' || request.idempotencyKey === undefined || body === undefined) return undefined;
  const [first, ...rest] = body.items;
  const items = [{ ...first, quantity: first.quantity + 1 }, ...rest];
  const orderId = deriveOrderId(request.caller, request.idempotencyKey);
  return orderPlacedEvent(
    { orderId, customerId: body.customerId, items, totalCents: orderTotalCents(items), caller: request.caller },
    occurredAt,
  );
}

/**
 * Stock and points against the orders that exist: reserved per SKU = the quantities of the placed and
 * not cancelled orders; points per customer = the points of every order they placed.
 */
export function checkStockAndPoints(
  entities: readonly EntityItem[],
  effects: ReadonlyMap<string, Record<string, unknown>>,
): { violations: Violation[]; summary: string } {
  const orders = entities as unknown as OrderItem[];
  const violations: Violation[] = [];
  const expectedReserved = new Map<string, number>();
  const expectedPoints = new Map<string, number>();
  for (const order of orders) {
    // Points belong to the caller's customer: the same customer id under two callers is two customers.
    const customer = JSON.stringify([order.caller, order.customerId]);
    expectedPoints.set(customer, (expectedPoints.get(customer) ?? 0) + loyaltyPoints(order.totalCents));
    for (const line of order.items) {
      const add = order.status === 'PLACED' ? line.quantity : 0;
      expectedReserved.set(line.sku, (expectedReserved.get(line.sku) ?? 0) + add);
    }
  }
  for (const [sku, expected] of expectedReserved) {
    const actual = Number(effects.get(inventoryKey(sku).pk)?.reserved ?? 0);
    if (actual !== expected)
      violations.push({
        invariant: 'reserved',
        detail: `sku ${sku}: reserved ${actual}, ${comparedTo(actual, expected)}`,
      });
  }
  for (const [customer, expected] of expectedPoints) {
    const [caller, customerId] = JSON.parse(customer) as [string, string];
    const actual = Number(effects.get(customerKey(caller, customerId).pk)?.points ?? 0);
    if (actual !== expected)
      violations.push({
        invariant: 'points',
        detail: `customer ${customerId} of ${caller}: points ${actual}, ${comparedTo(actual, expected)}`,
      });
  }
  const cancelled = orders.filter((o) => o.status === 'CANCELLED').length;
  return {
    violations,
    summary: `${cancelled} cancelled; ${expectedReserved.size} SKUs, ${expectedPoints.size} customers`,
  };
}

/** Says which way an effect is off: a double effect is "more than expected", a lost one "less than expected". */
function comparedTo(actual: number, expected: number): string {
  return `${actual > expected ? 'more' : 'less'} than expected ${expected}`;
}

/**
 * Fulfilment's rules, layered on the kit's: a PICK is owed unless the order was cancelled before its
 * reservation (the late OrderPlaced is stale: no claim, no call), or the cancel superseded the place
 * before its PICK went through; then it may be absent. And in order: no PICK reached the warehouse
 * after the order's CANCEL_PICK had.
 */
export const fulfilmentProviderRules: NonNullable<ProofDomain['providerRules']> = (facts) => {
  // Typed: a rename of the consumer fails typecheck here instead of silently dropping its rules.
  const fulfilment: ConsumerName = 'fulfilment';
  const optional = new Set<string>();
  const violations: Violation[] = [];
  for (const order of facts.entities as unknown as OrderItem[]) {
    // The key a call went out under: this release's, or an older release's (a deploy or a rollback ran
    // one), which built it without the tenant (packages/runtime/src/inbox/keys.ts).
    const keyOf = (eventId: string) => {
      const current = providerKey(fulfilment, { eventId, tenant: order.caller });
      const older = providerKey(fulfilment, { eventId }, 1);
      return facts.log.has(current) || !facts.log.has(older) ? current : older;
    };
    const pickKey = keyOf(orderPlacedEventId(order.orderId));
    const cancelPick = keyOf(orderCancelledEventId(order.orderId));
    // Fulfilment's state is on its sequenced ledger's entity item for the order (the claims are there too),
    // or, for an order the inbox ledger began before an upgrade, on its `FULFILMENT#<orderId>` item.
    const state =
      facts.effects.get(sequencedEntityKey(fulfilment, { entityId: order.orderId, tenant: order.caller }).pk)?.state ??
      facts.effects.get(fulfilmentKey(order.orderId).pk)?.state;
    if (state === 'CANCELLED_UNRESERVED' || facts.superseded(pickKey)) optional.add(pickKey);
    const [earlier, later] = [facts.log.get(pickKey), facts.log.get(cancelPick)];
    if (earlier !== undefined && later !== undefined && String(earlier.lastCalledAt) > String(later.firstCalledAt)) {
      violations.push({
        invariant: 'provider-order',
        detail: `order ${order.orderId}: ${pickKey} called at ${String(earlier.lastCalledAt)}, after ${cancelPick} reached the provider at ${String(later.firstCalledAt)}`,
      });
    }
  }
  return { optional, violations };
};

/** The PICKs the warehouse performed after its order's first CANCEL_PICK (in the provider's order of performance). */
export function picksAfterCancel<E extends { seq: number; payload: Record<string, unknown> }>(
  effects: readonly E[],
): E[] {
  const cancelledAt = new Map<string, number>();
  for (const e of effects)
    if (e.payload.instruction === 'CANCEL_PICK') {
      const order = String(e.payload.orderId);
      cancelledAt.set(order, Math.min(cancelledAt.get(order) ?? Infinity, e.seq));
    }
  return effects.filter(
    (e) => e.payload.instruction === 'PICK' && e.seq > (cancelledAt.get(String(e.payload.orderId)) ?? Infinity),
  );
}

/** The shop, as the proof kit judges it. */
export const SHOP_PROOF: ProofDomain = {
  entityNoun: 'orders',
  entityNounSingular: 'order',
  entityTableOutput: 'OrdersTableName',
  isEntityOfRun: (item, runId) =>
    item.entity === ENTITY_ORDER && (runId === '' || String(item.customerId ?? '').startsWith(`${runId}-`)),
  idOf: (entity) => String(entity.orderId),
  buildPlan: buildOrderPlan,
  entityIdOf: deriveOrderId,
  createdEventIdOf: orderPlacedEventId,
  producedEvents: orderEvents,
  forgedCreateEvent: forgedOrderPlaced,
  checkEffects: checkStockAndPoints,
  providerRules: fulfilmentProviderRules,
  checkPerformed: (performed) =>
    picksAfterCancel(performed).map((e) => ({
      invariant: 'provider-order',
      detail: `order ${String(e.payload.orderId)}: PICK performed after its CANCEL_PICK at the warehouse`,
    })),
  // `provider mail: 120 performed for 120 placed orders, 0 duplicates (keyed); 3 answers lost, 41 retried calls absorbed by the key`
  // `provider warehouse: 137 performed (120 PICK, 17 CANCEL_PICK), 0 duplicates, 0 PICK after CANCEL_PICK`
  providerLine: (s, orders) => {
    if (s.provider !== 'warehouse') return keyedProviderLine(s, `${orders} placed orders`);
    const count = (instruction: string) => s.effects.filter((e) => e.payload.instruction === instruction).length;
    return `provider warehouse: ${s.performed} performed (${count('PICK')} PICK, ${count('CANCEL_PICK')} CANCEL_PICK), ${s.duplicates} duplicates, ${picksAfterCancel(s.effects).length} PICK after CANCEL_PICK`;
  },
  entityOfPayload: (payload) => (typeof payload.orderId === 'string' ? payload.orderId : undefined),
};
