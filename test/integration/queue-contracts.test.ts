import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { logger } from '@exactly-once/runtime/runtime/observability';
import { describeQueueContract, type QueueHarness } from '../simulation/contracts/queue-contracts';
import { useEmulatorEnvironment } from '../support/emulated-dynamodb';
import { testSqsClient } from '../support/emulated-messaging';

/** The same queue contract the simulated queues pass, here on fauxqs in real time. */
async function fauxqsQueues(): Promise<QueueHarness> {
  useEmulatorEnvironment();
  // The publisher's warning on the missing-queue case is expected; the logger was built before the environment was set.
  logger.setLogLevel('SILENT');
  const sqs = testSqsClient();
  const run = randomUUID().slice(0, 8);
  let pairs = 0;
  const create = async (name: string, attributes: Record<string, string>) => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    return QueueUrl!;
  };
  return {
    sqs,
    async createQueuePair({ fifo, visibilityTimeoutSeconds, maxReceiveCount }) {
      pairs += 1;
      const suffix = fifo ? '.fifo' : '';
      const common = {
        VisibilityTimeout: String(visibilityTimeoutSeconds),
        ...(fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'false' } : {}),
      };
      const deadLetterQueueUrl = await create(`contract-${run}-${pairs}-dlq${suffix}`, common);
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: deadLetterQueueUrl, AttributeNames: ['QueueArn'] }),
      );
      const queueUrl = await create(`contract-${run}-${pairs}${suffix}`, {
        ...common,
        ...(fifo ? { DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' } : {}),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes!.QueueArn, maxReceiveCount }),
      });
      return { queueUrl, deadLetterQueueUrl };
    },
    async receive(queueUrl, max) {
      // A short poll: fauxqs holds each queue in one place, so it sees every visible message.
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: max,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      return Messages.map((m) => ({
        messageId: m.MessageId!,
        body: m.Body ?? '',
        receiptHandle: m.ReceiptHandle!,
        receiveCount: Number(m.Attributes?.ApproximateReceiveCount),
        groupId: m.Attributes?.MessageGroupId,
        attributes: Object.fromEntries(
          Object.entries(m.MessageAttributes ?? {}).map(([name, value]) => [name, value.StringValue ?? '']),
        ),
      }));
    },
    elapse: (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000)),
    close: async () => sqs.destroy(),
  };
}

// Where fauxqs differs from SQS, the contract keeps SQS's semantics and leaves the case out here
// (the simulation side runs it: test/simulation/memory-queue-contracts.test.ts):
// - a FIFO receive takes at most one message per group (SQS returns as many of a group as it can, in
//   order), so fauxqs never puts two of a group in one batch;
// - FIFO deduplication is keyed on the deduplication id alone: it ignores DeduplicationScope
//   messageGroup, which the stack sets on its FIFO source queue (SQS then deduplicates per group).
describeQueueContract('fauxqs', fauxqsQueues, {
  fifoOneMessagePerGroupPerReceive: true,
  fifoDeduplicationIgnoresScope: true,
});
