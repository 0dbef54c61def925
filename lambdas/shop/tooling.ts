import { CONSUMERS } from './consumers';
import { ORDER_EVENT_TYPES, parseOrderEvent } from './domain/events';

/**
 * What the tools (tools/: the DLQ tool, the proof kit, the simulation, the local runtime) know of
 * the shop, in one place: its consumers and how to tell one of its events from anything else.
 * `lambdas/example.ts` hands it to them; tools/example.ts says what it must hold.
 */
export const tooling = {
  consumers: CONSUMERS,
  scaffold: { folder: 'lambdas/shop', eventTypes: ORDER_EVENT_TYPES },
  isEvent(body: string): boolean {
    try {
      parseOrderEvent(body);
      return true;
    } catch {
      return false;
    }
  },
};
