import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { ConsumerWiring } from '@exactly-once/runtime/wiring/consumer-wiring';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';

/** The project's root: a spec's entry is relative to it. */
const PROJECT_ROOT = PROJECT_DIR;

/**
 * What the simulation derives from one consumer spec (an entry of the application's consumer list),
 * so a consumer added to the list is simulated without editing the world:
 * its queue names, the relay's route to it, and its handler factory.
 */

/** A consumer's queue and DLQ names; a FIFO queue's name must end in `.fifo`, as in SQS. */
export function queueNamesOf(spec: Pick<ConsumerSpec, 'name' | 'fifo'>) {
  const suffix = spec.fifo ? '.fifo' : '';
  return { queue: `${spec.name}${suffix}`, deadLetterQueue: `${spec.name}-dlq${suffix}` };
}

/** The URL of the simulated queue called `name` (what SendMessage and friends are given). */
export const simQueueUrl = (name: string): string => `https://sqs.sim.local/${name}`;

/**
 * The relay's and the sweeper's routing (ENV.consumerRoutes) as the stack
 * builds it from the consumer list, naming the simulated queues.
 */
export function consumerRoutes(specs: readonly ConsumerSpec[]): ConsumerRoute[] {
  return specs.map((spec) => ({
    consumer: spec.name,
    queueUrl: simQueueUrl(queueNamesOf(spec).queue),
    fifo: spec.fifo,
    eventTypes: [...spec.eventTypes],
  }));
}

export type ConsumerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
export type HandlerFactory = (wiring: ConsumerWiring) => ConsumerHandler;

/** A deployed binding's import of its factory (docs/architecture.md, "Entry modules"): `makeHandler` first. */
const FACTORY_IMPORT = /^import \{ makeHandler\b[^}]*\} from '(\.{1,2}\/[^']+)';$/m;

/**
 * The module of a function's factory, from the module its `entry` names (relative to `root`): a
 * deployed binding (`export const handler = makeHandler(partsFromEnv())`) names its factory in
 * its import of `makeHandler`, and that module, which reads no environment as it loads, is the
 * one to load; an entry that imports no `makeHandler` is taken as the factory module itself.
 */
export function factoryModuleOf(entry: string, root = PROJECT_ROOT): string {
  const imported = FACTORY_IMPORT.exec(readFileSync(path.resolve(root, entry), 'utf8'))?.[1];
  if (imported === undefined) return entry;
  return `${path.posix.join(path.posix.dirname(entry), imported)}.ts`;
}

/**
 * The whole consumer function on given parts, from the factory module of its spec's entry
 * (factoryModuleOf): by convention each exports `makeHandler(wiring)`. The module is named by data
 * (the spec), so there is no hand-kept registry to forget a consumer in, and the deployed binding,
 * which reads the environment, is never loaded.
 */
export function handlerFactory(spec: Pick<ConsumerSpec, 'name' | 'entry'>): HandlerFactory {
  const module = factoryModuleOf(spec.entry);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module is named by the spec, not by an import.
  const entry = require(path.resolve(PROJECT_ROOT, module)) as Record<string, unknown>;
  const factory = entry.makeHandler;
  if (typeof factory !== 'function')
    throw new Error(`consumer "${spec.name}": ${module} exports no makeHandler(wiring) to simulate it with`);
  return factory as HandlerFactory;
}
