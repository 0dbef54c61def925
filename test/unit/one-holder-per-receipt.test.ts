import type { SQSRecord } from 'aws-lambda';
import {
  leaseHolderOf,
  queueConsumerHandler,
  type ConsumerRuntime,
} from '@exactly-once/runtime/consumer/queue-consumer';
import type { RecordWork } from '@exactly-once/runtime/consumer/record-work';
import { parseEnvelope } from '@exactly-once/runtime/envelope';
import type { ApplyOutcome } from '@exactly-once/runtime/inbox/ports';
import { lambdaContext } from '@exactly-once/runtime/testing';
import { memoryEntityConsumer, recordOf, thing } from '../support/memory-entity-consumer';

/**
 * One lease holder and one transaction token per SQS record (its receipt), not per message id: two
 * receipts of one message in one batch (client-side batching, a visibility lapse) are two copies, and
 * only one of them may apply the effect and call the provider. On a standard consumer's handler, which
 * runs a batch's records in parallel, over the in-memory DynamoDB.
 */

function consumer() {
  const c = memoryEntityConsumer();
  const ends: { receipt: string; end: ApplyOutcome | string }[] = [];
  const runtime: ConsumerRuntime = {
    settings: c.settings,
    refreshFaults: async () => undefined,
    setTimer: (ms, fire) => {
      const timer = setTimeout(fire, ms);
      return () => clearTimeout(timer);
    },
    withFaults: (apply) => apply,
  };
  const handler = queueConsumerHandler(runtime, {
    fifo: false,
    parse: parseEnvelope,
    apply: async (event, record: SQSRecord, work: RecordWork) => {
      try {
        const outcome = await c.apply(event, work);
        ends.push({ receipt: record.receiptHandle, end: outcome });
        return outcome;
      } catch (error) {
        ends.push({ receipt: record.receiptHandle, end: (error as Error).name });
        throw error;
      }
    },
  });
  return { ...c, handler, ends };
}

test('a batch with one message twice (two receipt handles): one effect, one provider call, and the other copy is not applied', async () => {
  const c = consumer();
  const event = thing('thing-1');
  const body = JSON.stringify(event);
  const copies = [recordOf(body, 'msg-twice'), recordOf(body, 'msg-twice')];

  await c.handler({ Records: copies }, lambdaContext(10_000, { requestId: 'request-1' }));

  expect(c.appliedCount('thing-1')).toBe(1);
  expect(c.provider.performed).toEqual([`probe:${event.eventId}`]);
  expect(c.ends.filter((e) => e.end === 'applied')).toHaveLength(1);
  // The other copy found the claim taken and its call leased by the first: it is retried later.
  expect(c.ends.map((e) => e.end).sort()).toEqual(['ProviderCallInProgress', 'applied']);
});

test("a record's lease holder is the request id and its receipt's hash: two receipts of one message differ, one receipt is stable", () => {
  const [a, b] = [recordOf('{}', 'msg-1'), recordOf('{}', 'msg-1')];

  expect(leaseHolderOf('request-1', a)).not.toBe(leaseHolderOf('request-1', b));
  expect(leaseHolderOf('request-1', a)).toBe(leaseHolderOf('request-1', a));
  expect(leaseHolderOf('request-1', a)).toMatch(/^request-1:[0-9a-f]{16}$/);
  expect(leaseHolderOf('request-2', a)).not.toBe(leaseHolderOf('request-1', a));
});
