import type { SQSRecord } from 'aws-lambda';
import type { ConsumerSettings } from '@exactly-once/runtime/consumer/consume-record';
import { DeadlineExceeded, type RecordWork } from '@exactly-once/runtime/consumer/record-work';
import { RETRY_BUDGET } from '@exactly-once/runtime/consumer/retry-budget';
import { parseEnvelope } from '@exactly-once/runtime/envelope';
import type { ApplyOutcome } from '@exactly-once/runtime/inbox/ports';
import { useUnitEnvironment } from '../support/handlers';
import { recordWork } from '../support/record-work';

/**
 * A provider's 2xx is recorded whenever the process lives: the done-mark runs under its own bound
 * (the batch's answer time), not the record's deadline, and consumeRecord waits for it past the
 * deadline. Cut there, the call would stay owed and the next copy would call a keyless provider again.
 */
let consumeRecord: typeof import('@exactly-once/runtime/consumer/consume-record').consumeRecord;

beforeAll(async () => {
  useUnitEnvironment(); // before the logger and metrics load
  ({ consumeRecord } = await import('@exactly-once/runtime/consumer/consume-record'));
});

const EVENT = {
  eventId: 'thing-1.ThingHappened',
  type: 'ThingHappened',
  entityId: 'thing-1',
  version: 1,
  occurredAt: new Date(Date.now() - 60_000).toISOString(),
  payload: {},
};

const RECORD = {
  messageId: 'msg-1',
  receiptHandle: 'receipt-1',
  body: JSON.stringify(EVENT),
  attributes: { ApproximateReceiveCount: '1' },
} as unknown as SQSRecord;

function settings() {
  const control = {
    changeVisibility: jest.fn(async () => undefined),
    sendToDeadLetterQueue: jest.fn(async () => undefined),
  };
  const consumer: ConsumerSettings = {
    consumer: 'probe',
    control,
    backoff: RETRY_BUDGET,
    dedupeHorizonSeconds: 86_400,
    now: () => new Date(),
  };
  return { consumer, control };
}

test('the deadline fires while a provider answer is being recorded: the record waits for the record and ends applied', async () => {
  const { consumer, control } = settings();
  const { work: base, controller } = recordWork();
  const work: RecordWork = { ...base, recordings: new Set() };
  const doneMarked: string[] = [];
  const apply = async (_event: unknown, w: RecordWork): Promise<ApplyOutcome> => {
    // The provider answered 2xx; its done-mark starts, then the record's deadline fires.
    const recording = new Promise<void>((resolve) => setTimeout(resolve, 30)).then(() => {
      doneMarked.push('done');
    });
    w.recordings?.add(recording);
    controller.abort(new DeadlineExceeded(w.deadline));
    await recording;
    w.recordings?.delete(recording);
    return 'applied';
  };

  const outcome = await consumeRecord(RECORD, consumer, parseEnvelope, apply, work);

  expect(outcome).toBe('applied');
  expect(doneMarked).toEqual(['done']);
  expect(control.changeVisibility).not.toHaveBeenCalled();
});

test('the deadline with nothing being recorded still fails the record for a later try', async () => {
  const { consumer, control } = settings();
  const { work: base, controller } = recordWork();
  const work: RecordWork = { ...base, recordings: new Set() };
  const apply = (): Promise<ApplyOutcome> => {
    controller.abort(new DeadlineExceeded(work.deadline));
    return new Promise(() => undefined); // a call that ignores the signal
  };

  const failed = consumeRecord(RECORD, consumer, parseEnvelope, apply, work);

  await expect(failed).rejects.toBeInstanceOf(DeadlineExceeded);
  expect(control.changeVisibility).toHaveBeenCalledTimes(1);
});
