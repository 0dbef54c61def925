import { consumerOutputNames, ledgerOf, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';

/**
 * Every dead-letter queue of the stack, found from its outputs by name, so a
 * DLQ added with an output of the same shape is covered without editing the tool:
 * - each consumer of the domain's list (`consumers`) by the output names its
 *   spec derives (`consumerOutputNames`), named and FIFO as its spec says; its
 *   messages are events and go back to its queue, and its dedupe horizon is the
 *   output `<X>DedupeHorizonSeconds` (none on a stack deployed before it);
 * - another `<X>DlqUrl` next to `<X>QueueUrl`: a consumer's DLQ all the same
 *   (e.g. one deployed from a list that has since changed), with the horizon
 *   `<X>DedupeHorizonSeconds` if the stack outputs one;
 * - `<X>DlqUrl` alone: a function's async-invocation DLQ (failed scheduled runs);
 * - `<X>FailureQueueUrl`: a stream event source's on-failure destination; its
 *   messages are pointers into the table's stream, not events.
 */
export type DeadLetterKind = 'consumer' | 'async-invoke' | 'stream-pointers';

export interface DeadLetterQueue {
  /** What an operator types: a consumer's name (the shop's `fulfilment`, `loyalty`), `relay-failures`, `sweeper`. */
  name: string;
  outputKey: string;
  url: string;
  fifo: boolean;
  kind: DeadLetterKind;
  /** Consumer DLQs only: where redriven messages go. */
  sourceUrl?: string;
  /**
   * Consumer DLQs only: the consumer's dedupe horizon, from the stack outputs; an
   * event older than it is refused by the consumer (DedupeHorizonPassed).
   * Undefined on a stack deployed before consumers had one.
   */
  dedupeHorizonSeconds?: number;
  /**
   * Consumer DLQs of a consumer on the list only: where its claims live (`ledgerOf(spec)`), so a
   * person's finding about a provider call is written where the consumer reads it. Undefined for a
   * consumer DLQ the list does not name: the tool cannot tell, and refuses to write a finding for it.
   */
  ledger?: 'inbox' | 'sequenced';
  /** What redrive does with this queue's messages, in words. */
  redrivesTo: string;
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const kebab = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

export function discoverDeadLetterQueues(
  outputs: Record<string, string>,
  consumers: readonly ConsumerSpec[],
): DeadLetterQueue[] {
  const found: DeadLetterQueue[] = [];
  for (const consumer of consumers) {
    const names = consumerOutputNames(consumer.name);
    const [url, sourceUrl] = [outputs[names.deadLetterQueueUrl], outputs[names.queueUrl]];
    // Not in the stack: deployed before this consumer was added (findDeadLetterQueue says so if asked).
    if (url === undefined || sourceUrl === undefined) continue;
    const horizon = horizonOutput(outputs, names.dedupeHorizonSeconds);
    const queue = consumerQueue(consumer.name, names.deadLetterQueueUrl, url, sourceUrl, consumer.fifo, horizon);
    found.push({ ...queue, ledger: ledgerOf(consumer) });
  }
  const listed = new Set(found.map((q) => q.outputKey));
  for (const [key, url] of Object.entries(outputs)) {
    if (listed.has(key)) continue;
    const dlq = /^(.+)DlqUrl$/.exec(key);
    const failures = /^(.+)FailureQueueUrl$/.exec(key);
    if (dlq !== null) {
      const sourceUrl = outputs[`${dlq[1]}QueueUrl`];
      found.push(
        sourceUrl !== undefined
          ? consumerQueue(
              kebab(dlq[1]),
              key,
              url,
              sourceUrl,
              url.endsWith('.fifo'),
              horizonOutput(outputs, `${dlq[1]}DedupeHorizonSeconds`),
            )
          : {
              name: kebab(dlq[1]),
              outputKey: key,
              url,
              fifo: url.endsWith('.fifo'),
              kind: 'async-invoke',
              redrivesTo: `nothing to resend: the ${kebab(dlq[1])}'s next scheduled run redoes a failed run`,
            },
      );
    } else if (failures !== null) {
      found.push({
        name: `${kebab(failures[1])}-failures`,
        outputKey: key,
        url,
        fifo: url.endsWith('.fifo'),
        kind: 'stream-pointers',
        redrivesTo: 'the outbox sweeper (pending outbox items are marked due)',
      });
    }
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

function consumerQueue(
  name: string,
  outputKey: string,
  url: string,
  sourceUrl: string,
  fifo: boolean,
  dedupeHorizonSeconds: number | undefined,
): DeadLetterQueue {
  return {
    name,
    outputKey,
    url,
    fifo,
    kind: 'consumer',
    sourceUrl,
    redrivesTo: queueName(sourceUrl),
    ...(dedupeHorizonSeconds === undefined ? {} : { dedupeHorizonSeconds }),
  };
}

/** A horizon output: whole seconds, or absent. Anything else is a broken stack, not a horizon to guess. */
function horizonOutput(outputs: Record<string, string>, key: string): number | undefined {
  const value = outputs[key];
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value))
    throw new Error(`The stack output ${key} is not a whole number of seconds: "${value}"`);
  return Number(value);
}

/**
 * A queue by its name, its output key or its URL; anything else is a usage error that lists the names,
 * and says so when the name is a consumer of the list that the stack does not have yet.
 */
export function findDeadLetterQueue(
  queues: DeadLetterQueue[],
  wanted: string,
  consumers: readonly ConsumerSpec[],
): DeadLetterQueue {
  const queue = queues.find((q) => q.name === wanted || q.outputKey === wanted || q.url === wanted);
  if (queue !== undefined) return queue;
  const has = `This stack has: ${queues.map((q) => q.name).join(', ') || 'none'}`;
  if (consumers.some((c) => c.name === wanted))
    throw new UsageError(
      `The stack has no DLQ of consumer "${wanted}" (no output ${consumerOutputNames(wanted).deadLetterQueueUrl}): it was deployed before the consumer was added; deploy it again. ${has}`,
    );
  throw new UsageError(`Unknown DLQ "${wanted}". ${has}`);
}

export function queueName(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}
