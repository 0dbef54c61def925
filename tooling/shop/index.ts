import { CONSUMERS } from '../../lambdas/shop/consumers';
import { ORDER_EVENT_TYPES, parseOrderEvent } from '../../lambdas/shop/domain/events';
import { SHOP_PROOF } from './proof';
import type { ExampleTooling } from '@exactly-once/tools';

/**
 * What the tools (packages/tools/src/) know of the shop, in one place: its consumers, the output naming its outbox
 * table, how to tell one of its events from anything else, where `new:consumer` writes, its providers
 * as the local provider serves them, the requests `npm start` suggests, and, loaded on demand, the
 * proof kit's domain (which the bench is built from too) and the simulated shop. `loadDomain` (packages/tools/src/load-domain.ts) loads it for
 * them; packages/tools/src/domain.ts says what it must hold.
 */
export const tooling = {
  consumers: CONSUMERS,
  outboxTableOutput: 'OrdersTableName',
  proof: SHOP_PROOF,
  // Loaded on demand: the simulated shop pulls in the whole simulation, which only `npm run sim` needs.
  simulation: () => import('./simulation/world').then((world) => world.SHOP_SIMULATION),
  scaffold: { folder: 'lambdas/shop', eventTypes: ORDER_EVENT_TYPES },
  // What the shop's two providers are like: a mail API queues a message (202); a warehouse API takes
  // PICK and CANCEL_PICK instructions only, and creates one (201).
  localProviders: {
    mail: { route: '/mail/messages', status: 202, idPrefix: 'msg' },
    warehouse: {
      route: '/warehouse/instructions',
      status: 201,
      idPrefix: 'ins',
      refuse: (payload: Record<string, unknown>) =>
        payload.instruction === 'PICK' || payload.instruction === 'CANCEL_PICK'
          ? undefined
          : 'instruction must be PICK or CANCEL_PICK.',
      answerFields: (payload: Record<string, unknown>) => ({ instruction: payload.instruction }),
    },
  },
  tryIt: [
    `POST /orders '{"customerId":"cust-1","items":[{"sku":"sku-1","quantity":2,"unitPriceCents":1250}]}' --idempotency-key order-1`,
    'GET /orders/<orderId from the response>',
  ],
  isEvent(body: string): boolean {
    try {
      parseOrderEvent(body);
      return true;
    } catch {
      return false;
    }
  },
} satisfies ExampleTooling;
