import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDbOrderRepository } from '../../../lambdas/shop/aws/dynamodb-order-repository';
import { ORDER_PK_PREFIX } from '../../../lambdas/shop/aws/order-table';
import { CONSUMERS } from '../../../lambdas/shop/consumers';
import { ORDER_EVENT_TYPES, type OrderEvent } from '../../../lambdas/shop/domain/events';
import { deriveOrderId, type PlaceOrderRequest } from '../../../lambdas/shop/domain/order';
import { cancelOrder } from '../../../lambdas/shop/use-cases/cancel-order';
import { IdempotencyKeyReusedError } from '../../../lambdas/shop/use-cases/place-order';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import type { ConsumerSpec } from '@exactly-once/runtime';
import { FunctionTimeout, ServiceUnavailable, SimulatedCrash } from '@exactly-once/tools/simulation/world/invocation';
import {
  ENGINE_DEFAULTS,
  MECHANISM_GUARDS,
  simulate as simulateWorld,
  simulatedWorld,
  World as EngineWorld,
  type ApiClient,
  type ApiPost,
  type DomainClients,
  type MechanismGuards,
  type SimulationDomain,
  type SimulationOptions,
} from '@exactly-once/tools/simulation/world/world';
import type { SimulationResult } from '@exactly-once/tools/simulation/contract';
import { EFFECTS_TABLE } from '@exactly-once/tools/simulation/world/tables';
import { createOrderHandler, CREATE_ORDER_TIMEOUT_SECONDS, ORDERS_TABLE } from './api';
import { SHOP_PROOF } from '../proof';

export { DEFAULT_FAULTS, DEFAULT_SETTINGS } from '@exactly-once/tools/simulation/world/world';
export type { SimulationResult } from '@exactly-once/tools/simulation/contract';
export type { FaultRates } from '@exactly-once/tools/simulation/world/world';
export type { ShopSimulationOptions as SimulationOptions };

/**
 * The simulated shop: the shop's plug-in for the simulation engine (packages/tools/src/simulation/world/world.ts).
 * It gives the engine its clients (customers placing, replaying and cancelling orders through the
 * deployed create-order handler and the cancel use case), its events (how to forge one), its table
 * and its entities, and its own guards; the engine runs everything else.
 */
export type Guards = MechanismGuards & {
  /** Fulfilment's per-order version condition. */
  versionCheck: boolean;
};

export interface ShopSimulationOptions extends SimulationOptions {
  customers: number;
  skus: number;
  cancelChance: number;
  concurrentRetryChance: number;
  replayChance: number;
  /** A client sends its key again with another body (a client bug): it must get 422, never the first order. */
  keyReuseChance: number;
  guards: Guards;
}

export const ALL_GUARDS: Guards = {
  ...MECHANISM_GUARDS,
  versionCheck: true,
};

export function simulationOptions(overrides: Partial<ShopSimulationOptions> & { seed: number }): ShopSimulationOptions {
  return {
    ...ENGINE_DEFAULTS,
    customers: 25,
    skus: 15,
    concurrentRetryChance: 0.1,
    replayChance: 0.1,
    keyReuseChance: 0.02,
    guards: ALL_GUARDS,
    ...overrides,
  };
}

/** The shop's customers on one simulated world: one client per order, its key, its retries, its cancel. */
class ShopClients implements DomainClients {
  constructor(private readonly world: EngineWorld<ShopSimulationOptions>) {}

  start(index: number): void {
    const { scheduler, options } = this.world;
    const lines = scheduler.between(1, 3);
    const request: PlaceOrderRequest = {
      customerId: `cust-${scheduler.between(1, options.customers)}`,
      items: Array.from({ length: lines }, () => ({
        sku: `sku-${scheduler.between(1, options.skus)}`,
        quantity: scheduler.between(1, 4),
        unitPriceCents: scheduler.between(50, 5000),
      })),
    };
    const client: Client = {
      caller: `client-${index % 7}`,
      session: 1,
      key: `key-${index}`,
      request,
      chains: 0,
      created: false,
      replayed: false,
      reusedKey: false,
      cancelled: false,
      clockSkewMs: this.world.producerClockSkewMs(index),
    };
    this.world.activeClients += 1;
    this.place(client, 'new', 1);
    if (scheduler.chance(options.concurrentRetryChance)) {
      scheduler.fault('client-concurrent-retry', client.key);
      this.place(client, 'retry-concurrent', 1);
    }
  }

  /**
   * What a client does once none of its requests is in flight any more: maybe
   * replay the request (same key and body; again after a cancel, when the API
   * must still answer with the first answer), maybe send the key again with
   * another body (it must get 422), then maybe cancel.
   */
  private afterRequests(client: Client): void {
    const { scheduler, options } = this.world;
    if (client.created && !client.replayed && scheduler.chance(options.replayChance)) {
      client.replayed = true;
      scheduler.at(scheduler.between(100, 600_000), () => this.place(client, 'retry-sequential', 1));
    } else if (client.created && !client.reusedKey && scheduler.chance(options.keyReuseChance)) {
      client.reusedKey = true;
      const other = { ...client.request, customerId: `${client.request.customerId}-other` };
      scheduler.fault('client-key-reuse', client.key);
      scheduler.at(scheduler.between(100, 600_000), () => this.place(client, 'retry-sequential', 1, false, other));
    } else if (client.created && !client.cancelled && scheduler.chance(options.cancelChance)) {
      scheduler.at(scheduler.between(0, 120_000), () => this.cancel(client));
    } else {
      this.world.activeClients -= 1;
      if (!client.created) scheduler.trace(`client gave up on key=${client.key}`);
    }
  }

  /** One POST /orders through the deployed create-order handler (Powertools' idempotency layer, then the use case). */
  private place(
    client: Client,
    op: PlannedRequest['op'],
    attempt: number,
    continuesChain = false,
    body: PlaceOrderRequest = client.request,
  ): void {
    const post: ApiPost = {
      kind: 'api-place',
      path: '/orders',
      body,
      timeoutSeconds: CREATE_ORDER_TIMEOUT_SECONDS,
      handler: (invocation) =>
        createOrderHandler(
          invocation,
          this.world.db,
          this.world.options.guards.apiIdempotency,
          this.world.producerClock(client.clockSkewMs),
        ),
      statusOf: (error, who) => this.statusOf(error, who),
      done: () => this.afterRequests(client),
    };
    this.world.post(client, post, op, attempt, continuesChain);
  }

  private cancel(client: Client): void {
    const orderId = this.entityIdOf(client.caller, client.key);
    this.world.command(client, {
      kind: 'api-cancel',
      op: 'cancel',
      method: 'POST',
      path: `/orders/${orderId}/cancel`,
      what: `cancel of ${orderId}`,
      run: (invocation, caller) =>
        cancelOrder(new DynamoDbOrderRepository(invocation.documents, ORDERS_TABLE), {
          caller,
          orderId,
          now: this.world.producerClock(client.clockSkewMs)(),
        }),
      answer: (outcome) => (outcome.kind === 'cancelled' ? 200 : 404),
      statusOf: (error, who) => this.statusOf(error, who),
      done: (status) => {
        if (status !== 200) {
          this.world.activeClients -= 1;
          return;
        }
        // Cancelled: the client may still replay its POST, which must answer as the first time.
        client.cancelled = true;
        client.replayed = false;
        this.afterRequests(client);
      },
    });
  }

  /** The order a client's key must map to: the one its first session's caller derives. */
  readonly entityIdOf = (client: string, key: string): string => {
    // Asked again for each cancel and by the final check: derived once per client and key (it hashes).
    const known = `${client}\n${key}`;
    let orderId = this.orderIds.get(known);
    if (orderId === undefined) {
      orderId = deriveOrderId(this.world.callerOf(client, 1), key);
      this.orderIds.set(known, orderId);
    }
    return orderId;
  };
  private readonly orderIds = new Map<string, string>();

  /** The API's error classes: 422 for key reuse, 503 for a dependency that failed transiently, no answer on a crash. */
  private statusOf(error: unknown, who: string): number | 'no-response' {
    if (error instanceof SimulatedCrash || error instanceof FunctionTimeout) return 'no-response';
    if (error instanceof IdempotencyKeyReusedError) return 422;
    if (error instanceof TransactionCanceledException || error instanceof ServiceUnavailable) return 503;
    this.world.unexpectedErrors.push(`${who}: ${String(error)}`);
    return 500;
  }
}

interface Client extends ApiClient {
  request: PlaceOrderRequest;
  /** Replayed since the last cancel (or ever, before one). */
  replayed: boolean;
  reusedKey: boolean;
  cancelled: boolean;
  /** How far the clock of the API instance producing its events is off (ms; 0 for most). */
  clockSkewMs: number;
}

/**
 * The shop's consumers as the simulation deploys them: fulfilment's entry is its releases
 * (fulfilment-releases.ts), so a deploy window or a rollback runs the inbox ledger as its previous release.
 */
const SIMULATED_CONSUMERS: readonly ConsumerSpec[] = withFulfilmentEntry(
  'tooling/shop/simulation/fulfilment-releases.ts',
);

/**
 * The shop's consumers with fulfilment reading no other ledger's orders in this release (a guard switched
 * off, as a consumer list: the engine builds a consumer from its entry alone).
 */
export const FULFILMENT_WITHOUT_LEGACY_READ: readonly ConsumerSpec[] = withFulfilmentEntry(
  'tooling/shop/simulation/fulfilment-without-legacy-read.ts',
);

function withFulfilmentEntry(entry: string): readonly ConsumerSpec[] {
  return CONSUMERS.map((spec) => (spec.name === 'fulfilment' ? { ...spec, entry } : spec));
}

/**
 * The prefix of fulfilment's per-order items: its sequenced ledger's entity items,
 * `sequencedEntityKey('fulfilment', event)` (`EFFECT#fulfilment#[<tenant>#]<orderId>`).
 */
const FULFILMENT_ITEM_PREFIX = 'EFFECT#fulfilment#';
/** The inbox ledger's per-order items (`fulfilmentKey`), which a previous release writes. */
const LEGACY_FULFILMENT_PREFIX = 'FULFILMENT#';

/** The shop as the engine's plug-in. */
export const SHOP_DOMAIN: SimulationDomain<ShopSimulationOptions> = {
  consumers: SIMULATED_CONSUMERS,
  eventTypes: ORDER_EVENT_TYPES,
  outboxTable: ORDERS_TABLE,
  entityPartitionPrefix: ORDER_PK_PREFIX,
  clients: (world) => new ShopClients(world),
  // One more of the first line, and the total to match: a valid order event with other content.
  forge(envelope) {
    const event = envelope as OrderEvent;
    const [first, ...rest] = event.payload.items;
    const items = [{ ...first, quantity: first.quantity + 1 }, ...rest];
    return event.type === 'OrderPlaced'
      ? { ...event, payload: { ...event.payload, items, totalCents: event.payload.totalCents + first.unitPriceCents } }
      : { ...event, payload: { ...event.payload, items } };
  },
  entities: (db) => db.storedItems(ORDERS_TABLE).filter((i) => i.entity === 'ORDER'),
  proof: () => SHOP_PROOF,
  // The version condition is fulfilment's own: its per-order item on the sequenced ledger, whose sequence
  // condition and state condition are the order's, or on the inbox ledger a previous release runs; no other
  // consumer's ledger has one.
  conditionsIgnored: ({ guards }) =>
    guards.versionCheck
      ? undefined
      : (table, key) =>
          table === EFFECTS_TABLE &&
          (String(key.pk).startsWith(FULFILMENT_ITEM_PREFIX) || String(key.pk).startsWith(LEGACY_FULFILMENT_PREFIX)),
};

/** The simulated shop on the engine, for tests that look inside a world. */
export class World extends EngineWorld<ShopSimulationOptions> {
  constructor(options: ShopSimulationOptions, consumerSpecs: readonly ConsumerSpec[] = SIMULATED_CONSUMERS) {
    super(options, SHOP_DOMAIN, consumerSpecs);
  }
}

export function simulate(
  options: ShopSimulationOptions,
  consumerSpecs: readonly ConsumerSpec[] = SIMULATED_CONSUMERS,
): Promise<SimulationResult> {
  return simulateWorld(options, SHOP_DOMAIN, consumerSpecs);
}

/** The simulated shop, as `npm run sim` runs it (packages/tools/src/simulation/contract.ts). */
export const SHOP_SIMULATION = simulatedWorld(SHOP_DOMAIN, {
  options: simulationOptions,
  guardNames: { switches: ['versionCheck'], choices: {} },
  // Order ids, message ids and idempotency keys: what a violation names and the trace mentions.
  idsIn: (text) => text.match(/ord_[0-9a-f]+|[\w.-]+-m\d+|key-\d+/g) ?? [],
});
