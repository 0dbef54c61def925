import '@exactly-once/tools/simulation/world/quiet-powertools';
import { describeQueueContract, type QueueHarness } from './contracts/queue-contracts';
import { Scheduler } from '@exactly-once/tools/simulation/world/scheduler';
import { SimQueue, simulatedSqsClient } from '@exactly-once/tools/simulation/world/sqs';

/**
 * The simulated queues under the real SQS adapters pass the queue contract, in
 * virtual time (fauxqs: test/integration/queue-contracts.test.ts).
 */
function simulatedQueues(): QueueHarness {
  const scheduler = new Scheduler(1);
  const queues = new Map<string, SimQueue>();
  let pairs = 0;
  const queueAt = (url: string) => {
    const queue = queues.get(url);
    if (queue === undefined) throw new Error(`No simulated queue at ${url}`);
    return queue;
  };
  const add = (queue: SimQueue) => {
    queues.set(queue.url, queue);
    return queue.url;
  };
  return {
    // Every call completes at once: the contract is about the queues, not about latency or faults.
    sqs: simulatedSqsClient(queues, {
      io: async (_label, operation) => operation(),
      sqsSendFailure: () => undefined,
    }),
    async createQueuePair({ fifo, visibilityTimeoutSeconds, maxReceiveCount }) {
      pairs += 1;
      const suffix = fifo ? '.fifo' : '';
      const retentionSeconds = 4 * 86_400;
      const dlq = new SimQueue(scheduler, {
        name: `contract-${pairs}-dlq${suffix}`,
        fifo,
        visibilityTimeoutSeconds,
        retentionSeconds,
      });
      const queue = new SimQueue(scheduler, {
        name: `contract-${pairs}${suffix}`,
        fifo,
        visibilityTimeoutSeconds,
        maxReceiveCount,
        retentionSeconds,
        deadLetterQueue: dlq,
        ...(fifo ? { deduplicationScope: 'messageGroup' as const } : {}),
      });
      return { deadLetterQueueUrl: add(dlq), queueUrl: add(queue) };
    },
    async receive(queueUrl, max) {
      return queueAt(queueUrl)
        .receive(max)
        .map((m) => ({
          messageId: m.messageId,
          body: m.body,
          receiptHandle: m.handle!,
          receiveCount: m.receiveCount,
          groupId: m.groupId,
          attributes: { ...m.attributes },
        }));
    },
    elapse: (seconds) => scheduler.run(scheduler.now + seconds * 1000),
  };
}

describeQueueContract('simulated SQS', async () => simulatedQueues());
