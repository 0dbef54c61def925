import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { checkOutboxEvent } from '@exactly-once/runtime/outbox/outbox-event';
import { thingHappened, type ThingHappened } from '../exactly-once/fixtures/probe-events';
import { PROBE_FIFO_SPEC, PROBE_SPEC } from '../exactly-once/fixtures/probe-spec';
import { recordThing } from '../exactly-once/fixtures/probe-things';
import { testDynamoDbClient } from '../support/emulated-dynamodb';
import { receiveMatching, testSqsClient } from '../support/emulated-messaging';
import { EmulatedPipeline } from '../support/emulated-pipeline';

/**
 * Identifiers deliverable to SQS (`sqs-safe-identifiers`), on fauxqs with the probe stack's queues: the
 * relay's check before sending (checkOutboxEvent) passes exactly what a FIFO queue takes, as its body,
 * message group id (the entity) and deduplication id (the event), and the relay sends nothing else.
 */
const pipeline = new EmulatedPipeline();
let documents: DynamoDBDocumentClient;

beforeAll(async () => {
  await pipeline.start();
  documents = DynamoDBDocumentClient.from(testDynamoDbClient());
}, 180_000);
afterAll(async () => {
  documents.destroy();
  await pipeline.stop();
});

const RUN = `sqs-safe-${Date.now()}`;
const thing = (suffix: string) => `${RUN}-${suffix}`;
const withPayload = (suffix: string, label: string): ThingHappened => ({
  ...thingHappened(thing(suffix)),
  payload: { amount: 1, label } as ThingHappened['payload'],
});

/**
 * Bodies at each edge of the characters SQS carries (XML 1.0's Char production), and just past them. A
 * control character or a lone surrogate never reaches a body: JSON.stringify escapes both.
 * fauxqs checks a body's characters as SQS does, except that it also refuses those past U+FFFF, which
 * SQS takes (and the check passes), so none is listed; it does not check FIFO group and deduplication
 * ids at all, so those are proved by the relay below (nothing it refuses reaches a queue) and by
 * test/unit/envelope.test.ts.
 */
const BODIES: [string, ThingHappened][] = [
  ['an ordinary event', thingHappened(thing('plain'))],
  ['tab, newline and carriage return in its payload', withPayload('whitespace', 'a\tb\nc\rd')],
  ['U+D7FF and U+E000 in its payload', withPayload('edges', '\uD7FF\uE000')],
  ['U+FFFD in its payload', withPayload('fffd', 'c\uFFFD')],
  ['U+FFFE in its payload', withPayload('fffe', 'c\uFFFE')],
  ['U+FFFF in its payload', withPayload('ffff', 'c\uFFFF')],
];

test('every body the check passes is taken by a FIFO queue, and each it refuses the queue refuses too', async () => {
  const sqs = testSqsClient();
  const queueUrl = pipeline.queues.consumers[PROBE_FIFO_SPEC.name].queueUrl;
  const verdicts: Record<string, { check: boolean; queue: boolean }> = {};

  for (const [what, event] of BODIES) {
    const queue = await sqs
      .send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify(event),
          MessageGroupId: event.entityId,
          MessageDeduplicationId: event.eventId,
        }),
      )
      .then(
        () => true,
        () => false,
      );
    verdicts[what] = { check: checkOutboxEvent(event).ok, queue };
  }
  sqs.destroy();

  expect(Object.entries(verdicts).filter(([, v]) => v.check !== v.queue)).toEqual([]);
  // Both verdicts are exercised: the list is not all accepted, nor all refused.
  expect(Object.values(verdicts).filter((v) => v.queue)).toHaveLength(4);
  expect(Object.values(verdicts).filter((v) => !v.queue)).toHaveLength(2);
});

test('the relay sends none of the events SQS would refuse, reports none of them failed, and publishes the rest', async () => {
  const good = [thingHappened(thing('relay-good-1')), thingHappened(thing('relay-good-2'))];
  const refused = [thingHappened(`${thing('relay-space')} 1`), withPayload('relay-fffe', 'c\uFFFE')];
  for (const event of [good[0], ...refused, good[1]]) await recordThing(documents, pipeline.tables.names.Things, event);

  const { event, response } = await pipeline.relayStream();

  expect(event.Records).toHaveLength(4);
  // Not failed: a record the relay reports failed is retried until the stream gives up on it.
  expect(response.batchItemFailures).toEqual([]);
  for (const consumer of [PROBE_SPEC.name, PROBE_FIFO_SPEC.name]) {
    const received = await receiveMatching(pipeline.queues.consumers[consumer].queueUrl, 4, `${RUN}-relay`, 3_000);
    const sent = received.Records.map((r) => (JSON.parse(r.body) as ThingHappened).eventId).sort();
    expect({ consumer, sent }).toEqual({ consumer, sent: good.map((e) => e.eventId).sort() });
  }
});
