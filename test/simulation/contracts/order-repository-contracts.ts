import { DynamoDbOrderRepository } from '../../../lambdas/shop/aws/dynamodb-order-repository';
import { orderCancelledEvent, orderPlacedEvent } from '../../../lambdas/shop/domain/events';
import type { StoredOrder } from '../../../lambdas/shop/ports/order-repository';
import type { TableStore } from './port-contracts';

/** A store's setup may synthesize the shop's stack and create its tables (the emulator side) while other suites load both cores. */
const STORE_SETUP_MS = 180_000;

/**
 * The shop's order repository contract: its conditional writes (an order placed once, cancelled
 * once), on the store given by the caller: the simulation's in-memory DynamoDB (unit project) and
 * DynamoDB Local with the shop's tables (integration project). `tables.outbox` is the Orders table.
 */
let sequence = 0;
function uniqueOrder(): StoredOrder {
  sequence += 1;
  const tag = `${process.pid}-${Date.now()}-${sequence}`;
  return {
    orderId: `ord_${tag}`,
    status: 'PLACED',
    customerId: `cust-${tag}`,
    items: [
      { sku: `sku-a-${tag}`, quantity: 3, unitPriceCents: 250 },
      { sku: `sku-b-${tag}`, quantity: 1, unitPriceCents: 1_000 },
    ],
    totalCents: 1_750,
    createdAt: '2026-01-01T00:00:00.000Z',
    caller: 'caller-1',
    fingerprint: `fp-${tag}`,
  };
}

export function describeOrderRepositoryContract(name: string, makeStore: () => Promise<TableStore>): void {
  describe(`order repository contract: ${name}`, () => {
    let store: TableStore;
    const repository = () => new DynamoDbOrderRepository(store.documents, store.tables.outbox);
    beforeAll(async () => {
      store = await makeStore();
    }, STORE_SETUP_MS);
    afterAll(() => store.drop?.());

    test('place writes once; placing again returns the stored order from the failed condition', async () => {
      const orders = repository();
      const order = uniqueOrder();
      const event = orderPlacedEvent(order, order.createdAt);

      const first = await orders.place(order, event);
      const second = await orders.place({ ...order, fingerprint: 'other' }, event);

      expect(first).toEqual({ kind: 'created' });
      expect(second).toEqual({ kind: 'exists', order });
      expect(await orders.get(order.orderId)).toEqual(order);
    });

    test('cancel moves PLACED to CANCELLED once; a second cancel is refused and returns the cancelled order', async () => {
      const orders = repository();
      const order = uniqueOrder();
      await orders.place(order, orderPlacedEvent(order, order.createdAt));
      const at = '2026-01-01T00:05:00.000Z';

      const first = await orders.cancel(order, at, orderCancelledEvent(order, at));
      const second = await orders.cancel(order, at, orderCancelledEvent(order, at));

      expect(first).toEqual({ kind: 'cancelled', order: { ...order, status: 'CANCELLED', cancelledAt: at } });
      expect(second).toEqual({ kind: 'not-cancellable', order: { ...order, status: 'CANCELLED', cancelledAt: at } });
    });
  });
}
