/**
 * Every dead-letter queue of the stack, found from its outputs by name, so a
 * DLQ added with an output of the same shape is covered without editing the tool:
 * - `<X>DlqUrl` next to `<X>QueueUrl`: a consumer's DLQ; its messages are events
 *   and go back to `<X>QueueUrl`;
 * - `<X>DlqUrl` alone: a function's async-invocation DLQ (failed scheduled runs);
 * - `<X>FailureQueueUrl`: a stream event source's on-failure destination; its
 *   messages are pointers into the table's stream, not events.
 */
export type DeadLetterKind = 'consumer' | 'async-invoke' | 'stream-pointers';

export interface DeadLetterQueue {
  /** What an operator types: `fulfilment`, `loyalty`, `relay-failures`, `sweeper`. */
  name: string;
  outputKey: string;
  url: string;
  fifo: boolean;
  kind: DeadLetterKind;
  /** Consumer DLQs only: where redriven messages go. */
  sourceUrl?: string;
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

export function discoverDeadLetterQueues(outputs: Record<string, string>): DeadLetterQueue[] {
  const found: DeadLetterQueue[] = [];
  for (const [key, url] of Object.entries(outputs)) {
    const dlq = /^(.+)DlqUrl$/.exec(key);
    const failures = /^(.+)FailureQueueUrl$/.exec(key);
    if (dlq !== null) {
      const sourceKey = `${dlq[1]}QueueUrl`;
      const sourceUrl = outputs[sourceKey];
      found.push(
        sourceUrl !== undefined
          ? {
              name: kebab(dlq[1]),
              outputKey: key,
              url,
              fifo: url.endsWith('.fifo'),
              kind: 'consumer',
              sourceUrl,
              redrivesTo: queueName(sourceUrl),
            }
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

/** A queue by its name, its output key or its URL; anything else is a usage error that lists the names. */
export function findDeadLetterQueue(queues: DeadLetterQueue[], wanted: string): DeadLetterQueue {
  const queue = queues.find((q) => q.name === wanted || q.outputKey === wanted || q.url === wanted);
  if (queue === undefined)
    throw new UsageError(`Unknown DLQ "${wanted}". This stack has: ${queues.map((q) => q.name).join(', ') || 'none'}`);
  return queue;
}

export function queueName(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}
