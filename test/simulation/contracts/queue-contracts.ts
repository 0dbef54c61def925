import { DeleteMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { SqsEventPublisher } from '@exactly-once/runtime/aws/sqs-event-publisher';
import { SqsMessageControl } from '@exactly-once/runtime/aws/sqs-message-control';
import type { ConsumerRoute } from '@exactly-once/runtime/outbox/routes';
import { thingHappened, thingUndone, type ProbeEvent } from '../../exactly-once/fixtures/probe-events';
import { PROBE_CONSUMERS } from '../../exactly-once/fixtures/probe-spec';

/** A store's setup may synthesize a stack and create its tables or queues (the emulator side) while other suites load both cores. */
const STORE_SETUP_MS = 180_000;
/**
 * The queue contract: what the pipeline relies on from SQS, checked through the
 * real adapters (SqsEventPublisher, SqsMessageControl) and an SQS client. It
 * runs against the simulation's queues in virtual time (unit project) and
 * against fauxqs in real time (integration project), so the simulated queues
 * cannot drift from the queues the deployed code talks to. Where fauxqs
 * differs from SQS, the contract keeps SQS's semantics and the emulator's run
 * leaves that case out, saying why (see `QueueDeviations`).
 */
export interface ReceivedMessage {
  messageId: string;
  body: string;
  receiptHandle: string;
  receiveCount: number;
  groupId?: string;
  /** Message attributes, as their string values. */
  attributes: Record<string, string>;
}

export interface QueuePair {
  queueUrl: string;
  deadLetterQueueUrl: string;
}

export interface QueueHarness {
  sqs: SQSClient;
  /**
   * A fresh queue and its DLQ (both FIFO or both standard), the queue redriving to the DLQ after
   * `maxReceiveCount` receives. As the stack configures them: a FIFO source queue deduplicates per
   * message group (DeduplicationScope messageGroup, FifoThroughputLimit perMessageGroupId), its DLQ per queue.
   */
  createQueuePair(options: {
    fifo: boolean;
    visibilityTimeoutSeconds: number;
    maxReceiveCount: number;
  }): Promise<QueuePair>;
  /** One ReceiveMessage of up to `max` messages, as a consumer (or Lambda's event source mapping) does. */
  receive(queueUrl: string, max: number): Promise<ReceivedMessage[]>;
  /** Lets time pass: the virtual clock in the simulation, a real wait on the emulator. */
  elapse(seconds: number): Promise<void>;
  close?(): Promise<void>;
}

/** Where an implementation is known to differ from SQS; the cases that depend on it are not defined on that side (the SQS semantics stay the contract). */
export interface QueueDeviations {
  /** A FIFO receive returns at most one message per group (SQS returns as many of a group as it can). */
  fifoOneMessagePerGroupPerReceive?: boolean;
  /** A FIFO queue deduplicates across the whole queue even with DeduplicationScope messageGroup. */
  fifoDeduplicationIgnoresScope?: boolean;
}

/** Visibility timeouts short enough for the emulator's real clock, long enough for a loaded machine. */
const VISIBILITY_SECONDS = 1;
/** Past a 1 s visibility timeout, well before a 3 s backoff ends. */
const PAST_VISIBILITY = 1.3;
const BACKOFF_SECONDS = 3;
const MAX_RECEIVES = 2;

let sequence = 0;
/** A thing no other test (or run on the same queues) uses. */
function uniqueThing(): string {
  sequence += 1;
  return `thing-${process.pid}-${Date.now()}-${sequence}`;
}

export function describeQueueContract(
  name: string,
  makeHarness: () => Promise<QueueHarness>,
  deviations: QueueDeviations = {},
): void {
  describe(`queue contract: ${name}`, () => {
    let harness: QueueHarness;
    beforeAll(async () => {
      harness = await makeHarness();
    }, STORE_SETUP_MS);
    afterAll(() => harness.close?.());

    const pair = (fifo: boolean, maxReceiveCount = MAX_RECEIVES) =>
      harness.createQueuePair({ fifo, visibilityTimeoutSeconds: VISIBILITY_SECONDS, maxReceiveCount });
    const send = (queueUrl: string, body: string, group?: string) =>
      harness.sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: body,
          MessageAttributes: { marker: { DataType: 'String', StringValue: `attr-${body}` } },
          ...(group === undefined ? {} : { MessageGroupId: group, MessageDeduplicationId: `dedup-${body}` }),
        }),
      );
    const remove = (queueUrl: string, message: ReceivedMessage) =>
      harness.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.receiptHandle }));
    const bodies = (messages: ReceivedMessage[]) => messages.map((m) => m.body);
    /** Receives and deletes until a receive comes back empty (or `limit` receives), as a consumer draining a queue. */
    const drain = async (queueUrl: string, limit = 30) => {
      const all: ReceivedMessage[] = [];
      for (let i = 0; i < limit; i++) {
        const messages = await harness.receive(queueUrl, 10);
        if (messages.length === 0) break;
        for (const message of messages) await remove(queueUrl, message);
        all.push(...messages);
      }
      return all;
    };
    /** The probe consumers' routes: the FIFO one's queue at `fifoUrl` (both types), the standard one's at `standardUrl` (ThingHappened). */
    const routesTo = (fifoUrl: string, standardUrl: string): ConsumerRoute[] =>
      PROBE_CONSUMERS.map(({ name, fifo, eventTypes }) => ({
        consumer: name,
        queueUrl: fifo ? fifoUrl : standardUrl,
        fifo,
        eventTypes: [...eventTypes],
      }));
    const publisher = (fifo: QueuePair, standard: QueuePair) =>
      new SqsEventPublisher(harness.sqs, routesTo(fifo.queueUrl, standard.queueUrl));

    test('publisher: an entity’s events land in its FIFO group in publish order across batches; ThingHappened also on the standard queue', async () => {
      const [fifo, standard] = [await pair(true), await pair(false)];
      const thing = uniqueThing();
      const undone = thingUndone(thing);
      // 12 events: more than one SendMessageBatch of 10.
      const events: ProbeEvent[] = [
        thingHappened(thing),
        ...Array.from({ length: 11 }, (_, i) => ({ ...undone, eventId: `${undone.eventId}.${i}` })),
      ];

      const failed = await publisher(fifo, standard).publish(events);
      const onFifo = await drain(fifo.queueUrl);
      const onStandard = await drain(standard.queueUrl);

      expect([...failed]).toEqual([]);
      expect(onFifo.map((m) => (JSON.parse(m.body) as ProbeEvent).eventId)).toEqual(events.map((e) => e.eventId));
      expect(onFifo.map((m) => m.attributes.eventId)).toEqual(events.map((e) => e.eventId));
      expect(new Set(onFifo.map((m) => m.groupId))).toEqual(new Set([thing]));
      expect(onStandard.map((m) => m.attributes)).toEqual([
        { eventId: events[0].eventId, type: 'ThingHappened', traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-/) },
      ]);
    });

    test('publisher: the same event published again is accepted and dropped by FIFO (even after the first copy was consumed), but repeated on the standard queue', async () => {
      const [fifo, standard] = [await pair(true), await pair(false)];
      const happened = thingHappened(uniqueThing());

      const first = await publisher(fifo, standard).publish([happened]);
      const consumed = await drain(fifo.queueUrl);
      const second = await publisher(fifo, standard).publish([happened]);
      const third = await publisher(fifo, standard).publish([happened]);

      expect([...first, ...second, ...third]).toEqual([]);
      expect(consumed).toHaveLength(1);
      expect(await drain(fifo.queueUrl)).toEqual([]);
      expect((await drain(standard.queueUrl)).map((m) => m.attributes.eventId)).toEqual([
        happened.eventId,
        happened.eventId,
        happened.eventId,
      ]);
    });

    test('publisher: a send to a queue that does not exist fails the call, and every event of it is reported unpublished', async () => {
      const [fifo, standard] = [await pair(true), await pair(false)];
      const thing = uniqueThing();
      const events = [thingHappened(thing), thingUndone(thing)];

      const failed = await new SqsEventPublisher(
        harness.sqs,
        routesTo(`${fifo.queueUrl.replace(/\.fifo$/, '')}-missing.fifo`, standard.queueUrl),
      ).publish(events);

      expect([...failed].sort()).toEqual(events.map((e) => e.eventId).sort());
    });

    if (!deviations.fifoDeduplicationIgnoresScope)
      test('FIFO source queue: deduplication is per message group: an id already seen is dropped in its group and a new message in another', async () => {
        const { queueUrl } = await pair(true);
        const sendWith = (body: string, group: string) =>
          harness.sqs.send(
            new SendMessageCommand({
              QueueUrl: queueUrl,
              MessageBody: body,
              MessageGroupId: group,
              MessageDeduplicationId: 'same-id',
            }),
          );

        await sendWith('first in a', 'a');
        await sendWith('again in a', 'a');
        await sendWith('first in b', 'b');
        const delivered = await drain(queueUrl);

        expect(bodies(delivered).sort()).toEqual(['first in a', 'first in b']);
      });

    test('FIFO: a group is held while one of its messages is in flight, other groups are not; a delete releases the next in order', async () => {
      const { queueUrl } = await pair(true);
      await send(queueUrl, 'a1', 'a');
      await send(queueUrl, 'a2', 'a');

      const first = await harness.receive(queueUrl, 1);
      await send(queueUrl, 'b1', 'b');
      const whileInFlight = await harness.receive(queueUrl, 10);
      await remove(queueUrl, first[0]);
      const afterDelete = await harness.receive(queueUrl, 10);

      expect(bodies(first)).toEqual(['a1']);
      expect(bodies(whileInFlight)).toEqual(['b1']);
      expect(bodies(afterDelete)).toEqual(['a2']);
    });

    // fauxqs hands out one message per group per receive, so it never puts two of a group in one batch.
    if (!deviations.fifoOneMessagePerGroupPerReceive)
      test('FIFO: one receive returns several messages of a group in order; those released (0 s) behind an in-flight one stay held until it is deleted', async () => {
        const { queueUrl } = await pair(true);
        const control = new SqsMessageControl(harness.sqs, { queueUrl, deadLetterQueueUrl: '', fifo: true });
        for (const body of ['a1', 'a2', 'a3']) await send(queueUrl, body, 'a');

        const batch = await harness.receive(queueUrl, 10);
        // A FIFO consumer's release of the records skipped behind a failure.
        for (const skipped of batch.slice(1)) await control.changeVisibility(skipped.receiptHandle, 0);
        const whileHeadInFlight = await harness.receive(queueUrl, 10);
        await remove(queueUrl, batch[0]);
        const afterDelete = await harness.receive(queueUrl, 10);

        expect(bodies(batch)).toEqual(['a1', 'a2', 'a3']);
        expect(whileHeadInFlight).toEqual([]);
        expect(afterDelete.map((m) => [m.body, m.receiveCount])).toEqual([
          ['a2', 2],
          ['a3', 2],
        ]);
      });

    test('FIFO: a backoff (the message control’s ChangeMessageVisibility) holds the whole group until it ends; then the same message comes first', async () => {
      const { queueUrl } = await pair(true);
      const control = new SqsMessageControl(harness.sqs, { queueUrl, deadLetterQueueUrl: '', fifo: true });
      await send(queueUrl, 'a1', 'a');
      await send(queueUrl, 'a2', 'a');

      const [head] = await harness.receive(queueUrl, 1);
      await control.changeVisibility(head.receiptHandle, BACKOFF_SECONDS);
      await harness.elapse(PAST_VISIBILITY);
      const duringBackoff = await harness.receive(queueUrl, 10);
      await harness.elapse(BACKOFF_SECONDS - PAST_VISIBILITY + 0.3);
      const afterBackoff = await harness.receive(queueUrl, 10);

      expect(head.body).toBe('a1');
      expect(duringBackoff).toEqual([]);
      expect(afterBackoff[0]).toMatchObject({ body: 'a1', receiveCount: 2 });
    });

    test('standard: a message not deleted comes back after its visibility timeout (same id, new receipt handle, receive count + 1); a delete with the latest handle removes it', async () => {
      const { queueUrl } = await pair(false);
      await send(queueUrl, 'm');

      const [first] = await harness.receive(queueUrl, 10);
      const whileInFlight = await harness.receive(queueUrl, 10);
      await harness.elapse(PAST_VISIBILITY);
      const [again] = await harness.receive(queueUrl, 10);
      await remove(queueUrl, again);
      await harness.elapse(PAST_VISIBILITY);
      const afterDelete = await harness.receive(queueUrl, 10);

      expect(first).toMatchObject({ body: 'm', receiveCount: 1, attributes: { marker: 'attr-m' } });
      expect(whileInFlight).toEqual([]);
      expect(again).toMatchObject({ messageId: first.messageId, receiveCount: 2 });
      expect(again.receiptHandle).not.toBe(first.receiptHandle);
      expect(afterDelete).toEqual([]);
    });

    test('standard: a backoff through the message control delays redelivery past the visibility timeout; a release (0 s) makes it receivable at once', async () => {
      const { queueUrl } = await pair(false, 5); // a third receive must not redrive it
      const control = new SqsMessageControl(harness.sqs, { queueUrl, deadLetterQueueUrl: '', fifo: false });
      await send(queueUrl, 'm');

      const [first] = await harness.receive(queueUrl, 10);
      await control.changeVisibility(first.receiptHandle, BACKOFF_SECONDS);
      await harness.elapse(PAST_VISIBILITY);
      const duringBackoff = await harness.receive(queueUrl, 10);
      await harness.elapse(BACKOFF_SECONDS - PAST_VISIBILITY + 0.3);
      const [afterBackoff] = await harness.receive(queueUrl, 10);
      await control.changeVisibility(afterBackoff.receiptHandle, 0);
      const released = await harness.receive(queueUrl, 10);

      expect(duringBackoff).toEqual([]);
      expect(afterBackoff).toMatchObject({ messageId: first.messageId, receiveCount: 2 });
      expect(released.map((m) => [m.messageId, m.receiveCount])).toEqual([[first.messageId, 3]]);
    });

    test.each<[string, boolean]>([
      ['standard', false],
      ['FIFO', true],
    ])(
      'redrive (%s): a message received maxReceiveCount times moves to its DLQ on the next receive, keeping id, body and attributes; the rest of the queue goes on',
      async (_kind, fifo) => {
        const { queueUrl, deadLetterQueueUrl } = await pair(fifo);
        await send(queueUrl, 'poison', fifo ? 'g' : undefined);
        // On FIFO, `next` waits behind `poison` in its group until poison is gone.
        if (fifo) await send(queueUrl, 'next', 'g');

        const received: ReceivedMessage[] = [];
        for (let receive = 1; receive <= MAX_RECEIVES; receive++) {
          received.push(...(await harness.receive(queueUrl, 1)));
          await harness.elapse(PAST_VISIBILITY);
        }
        const afterLimit = await harness.receive(queueUrl, 10);
        const dead = await harness.receive(deadLetterQueueUrl, 10);

        expect(received.map((m) => [m.body, m.receiveCount])).toEqual([
          ['poison', 1],
          ['poison', 2],
        ]);
        expect(bodies(afterLimit)).toEqual(fifo ? ['next'] : []);
        expect(dead).toHaveLength(1);
        expect(dead[0]).toMatchObject({
          messageId: received[0].messageId,
          body: 'poison',
          attributes: { marker: 'attr-poison' },
        });
        if (fifo) expect(dead[0].groupId).toBe('g');
      },
    );

    test.each<[string, boolean]>([
      ['standard', false],
      ['FIFO', true],
    ])(
      'dead-letter send (%s): the message control puts a copy on the DLQ with the cause attributes (each cut at 1,024 characters); a FIFO resend of it is dropped',
      async (_kind, fifo) => {
        const { queueUrl, deadLetterQueueUrl } = await pair(fifo);
        const control = new SqsMessageControl(harness.sqs, { queueUrl, deadLetterQueueUrl, fifo });
        await send(queueUrl, 'bad', fifo ? 'g' : undefined);
        const [message] = await harness.receive(queueUrl, 10);
        const cause = {
          failureCause: 'SchemaViolation',
          failureMessage: `PermanentError: ${'x'.repeat(2_000)}`,
          consumer: 'probe-fifo',
          originalMessageId: message.messageId,
        };
        const deadLetter = {
          body: message.body,
          messageId: message.messageId,
          groupId: message.groupId,
          attributes: cause,
        };

        await control.sendToDeadLetterQueue(deadLetter);
        if (fifo) await control.sendToDeadLetterQueue(deadLetter); // a consumer retried after a crash
        await remove(queueUrl, message); // the consumer acks the original
        const dead = await drain(deadLetterQueueUrl);
        await harness.elapse(PAST_VISIBILITY);
        const source = await harness.receive(queueUrl, 10);

        expect(dead).toHaveLength(1);
        expect(dead[0]).toMatchObject({
          body: 'bad',
          attributes: { ...cause, failureMessage: cause.failureMessage.slice(0, 1024) },
        });
        if (fifo) expect(dead[0].groupId).toBe('g');
        expect(source).toEqual([]);
      },
    );
  });
}
