import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { ConsumerSpec } from '@exactly-once/cdk';
import type { ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import { PROBE_CONSUMERS } from '../exactly-once/fixtures/probe-spec';
import { buildProbeStack } from '../exactly-once/fixtures/probe-stack';
import { createTemplateTables, type EmulatedTables } from './emulated-dynamodb';
import { createTemplateQueues, relayStreamFilters } from './emulated-messaging';

/**
 * The mechanism alone, for the emulators: the neutral fixture's stack (probe-stack.ts: its entity table
 * `Things`, which holds the outbox as an application's table does, and the ExactlyOnce construct) with
 * the probe consumers. Tables and queues are created on DynamoDB Local and fauxqs from its synthesized template,
 * so they are the construct's own (keys, indexes, stream, TTL, FIFO, visibility, redrive), found by the
 * construct's objects, never by an application's logical ids.
 */

/** The tables the tests use, by these names. */
export type EmulatedTableName = 'Things' | 'Idempotency' | 'Effects' | 'ProviderLog';

export interface EmulatedStack {
  template: Record<string, unknown>;
  /** Each table's logical id, by its name here. */
  tableIds: Record<EmulatedTableName, string>;
  /** Each consumer's queue and DLQ logical ids, and the queue's maxReceiveCount, by consumer name. */
  consumerQueueIds: Record<string, { queue: string; deadLetterQueue: string; maxReceiveCount: number }>;
  /** The stream relay's on-failure queue. */
  relayFailureQueueId: string;
}

const built = new Map<string, EmulatedStack>();

/** The stack with `consumers` (the probe consumers unless given), synthesized once per test file and list. */
export function emulatedStack(consumers: readonly ConsumerSpec[] = PROBE_CONSUMERS): EmulatedStack {
  const key = consumers.map((c) => c.name).join(',');
  const known = built.get(key);
  if (known !== undefined) return known;
  const { app, stack } = buildProbeStack({ consumers, stackName: 'Probe' });
  const { exactlyOnce, thingsTable: things } = stack;
  const idOf = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as dynamodb.CfnTable);
  const result: EmulatedStack = {
    template: app.synth().getStackByName('Probe').template as Record<string, unknown>,
    tableIds: {
      Things: idOf(things),
      Idempotency: idOf(exactlyOnce.idempotencyTable),
      Effects: idOf(exactlyOnce.effectsTable),
      ProviderLog: idOf(exactlyOnce.providerLogTable),
    },
    consumerQueueIds: Object.fromEntries(
      exactlyOnce.pipelines.map(({ spec, queues }) => [
        spec.name,
        {
          queue: idOf(queues.queue),
          deadLetterQueue: idOf(queues.deadLetterQueue),
          maxReceiveCount: queues.maxReceiveCount,
        },
      ]),
    ),
    relayFailureQueueId: idOf(exactlyOnce.outbox.failureQueue),
  };
  built.set(key, result);
  return result;
}

/** The stack's tables on DynamoDB Local, under fresh names. */
export function createEmulatedTables(
  consumers: readonly ConsumerSpec[] = PROBE_CONSUMERS,
): Promise<EmulatedTables<EmulatedTableName>> {
  const { template, tableIds } = emulatedStack(consumers);
  const byId = new Map(Object.entries(tableIds).map(([name, id]) => [id, name as EmulatedTableName]));
  return createTemplateTables(template, (logicalId) => byId.get(logicalId));
}

/** A consumer's queue and DLQ on fauxqs. */
export interface EmulatedQueuePair {
  queueUrl: string;
  deadLetterQueueUrl: string;
}

export interface EmulatedQueues {
  /** By consumer name. */
  consumers: Record<string, EmulatedQueuePair>;
  relayFailureQueueUrl: string;
  /** The relay's routes to these queues, as the construct gives it CONSUMER_ROUTES. */
  routes: ConsumerRoute[];
}

/** Every queue of the stack on fauxqs, under fresh names; `visibilityTimeoutSeconds` replaces the consumer queues'. */
export async function createEmulatedQueues(
  options: { visibilityTimeoutSeconds?: number } = {},
  consumers: readonly ConsumerSpec[] = PROBE_CONSUMERS,
): Promise<EmulatedQueues> {
  const { template, consumerQueueIds, relayFailureQueueId } = emulatedStack(consumers);
  const urls = await createTemplateQueues(template, options);
  const url = (id: string) => {
    const found = urls.get(id);
    if (found === undefined) throw new Error(`The stack has no queue ${id}`);
    return found;
  };
  const pairs = Object.fromEntries(
    Object.entries(consumerQueueIds).map(([name, ids]) => [
      name,
      { queueUrl: url(ids.queue), deadLetterQueueUrl: url(ids.deadLetterQueue) },
    ]),
  );
  return {
    consumers: pairs,
    relayFailureQueueUrl: url(relayFailureQueueId),
    routes: consumers.map(({ name, fifo, eventTypes }) => ({
      consumer: name,
      queueUrl: pairs[name].queueUrl,
      fifo,
      eventTypes: [...eventTypes],
    })),
  };
}

const filters = new Map<string, unknown[]>();

/** The stack's relay stream filter (outbox INSERTs only), read from its template. */
export function emulatedRelayFilters(consumers: readonly ConsumerSpec[] = PROBE_CONSUMERS): unknown[] {
  const key = consumers.map((c) => c.name).join(',');
  if (!filters.has(key)) filters.set(key, relayStreamFilters(emulatedStack(consumers).template));
  return filters.get(key)!;
}
