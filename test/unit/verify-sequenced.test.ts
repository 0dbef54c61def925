import { DynamoDbSequencedEntityEffectLedger } from '@exactly-once/runtime/aws/sequenced-entity-effect-ledger';
import { SEQUENCE_ATTRIBUTES, sequencedEntityKey } from '@exactly-once/runtime/aws/sequenced-ledger';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { withoutInbox } from '@exactly-once/runtime/faults/inbox-bypass';
import { applyEntityEffect } from '@exactly-once/runtime/inbox/entity-effect';
import type { ProducedEvent } from '@exactly-once/tools/proof-kit/domain';
import { checkEachEventOncePerConsumer, EACH_EVENT_ONCE } from '@exactly-once/tools/proof-kit/verify';
import { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { thingHappened, thingUndone } from '../exactly-once/fixtures/probe-events';
import { PROBE_FIFO_SPEC } from '../exactly-once/fixtures/probe-spec';
import { work } from '../support/sequenced-ledger-cases';

/**
 * The proof kit's judgement of a consumer on the sequenced ledger (ConsumerSpec.ledger `sequenced`): its
 * claims are read from its entity items, written here by the real ledger on the in-memory DynamoDB, and
 * held to the same invariant as inbox claims (each event once per consumer, the owed calls made). The
 * entity's newest event must be the item's claim; no more claims than events; no call left owed.
 */

const SPEC: ConsumerSpec = { ...PROBE_FIFO_SPEC, name: 'probe-seq', ledger: 'sequenced', providers: ['probe-seq'] };
const [happened, undone] = [thingHappened('thing-1'), thingUndone('thing-1')];
const EVENTS: ProducedEvent[] = [happened, undone].map((event) => ({
  eventId: event.eventId,
  type: event.type,
  entityId: event.entityId,
  event,
}));
const PK = sequencedEntityKey(SPEC.name, happened).pk;

/** The consumer on the real ledger; `bypassed`: the local runtime's broken build, the sequence condition dropped. */
function consumer(options: { bypassed?: boolean; providerDown?: boolean } = {}) {
  const db = new MemoryDynamoDb();
  db.createTable('effects', { hash: 'pk', range: 'sk' });
  const documents = withoutInbox(db.asDocumentClient(), SPEC.name, () => options.bypassed === true);
  const ledger = new DynamoDbSequencedEntityEffectLedger(documents, { consumer: SPEC.name, tableName: 'effects' });
  const providerLog = new Map<string, { calls: number }>();
  const provider = {
    send: async (key: string) => {
      if (options.providerDown === true) throw new Error('provider down');
      providerLog.set(key, { calls: (providerLog.get(key)?.calls ?? 0) + 1 });
    },
  };
  const deps = { consumer: SPEC.name, eventTypes: SPEC.eventTypes, ledger, provider };
  const deliver = async (...events: EventEnvelope[]) => {
    for (const event of events) await applyEntityEffect(event, deps, work()).catch(() => 'failed');
  };
  const judge = () =>
    checkEachEventOncePerConsumer({
      events: EVENTS,
      consumers: [SPEC],
      effects: new Map(db.items('effects').map((i) => [String(i.pk), i])),
      providerLog,
    }).violations;
  return { deliver, judge, item: () => db.items('effects').find((i) => i.pk === PK) };
}

test('every event applied once, a duplicate and a stale redelivery acknowledged: the claims pass', async () => {
  const seq = consumer();

  await seq.deliver(happened, happened, undone, happened);

  expect(seq.judge()).toEqual([]);
  expect(seq.item()).toMatchObject({ [SEQUENCE_ATTRIBUTES.seq]: 2, [SEQUENCE_ATTRIBUTES.claims]: 2 });
});

test("an event whose claim is missing fails: the entity's newest event is not on its item", async () => {
  const seq = consumer();

  await seq.deliver(happened);

  expect(seq.judge()).toEqual([
    {
      invariant: EACH_EVENT_ONCE,
      detail: expect.stringMatching(
        /^probe-seq: ThingUndone thing-1:undone \(v2\), its entity's newest event, is not the claim on EFFECT#probe-seq#thing-1: it holds thing-1:happened at seq 1, an older event/,
      ),
    },
    { invariant: 'provider', detail: 'no provider call under key probe-seq:thing-1:undone' },
  ]);
});

test('an entity with no item at all: each of its events is reported without its claim', async () => {
  const seq = consumer();

  await seq.deliver();

  expect(seq.judge().filter((v) => v.invariant === EACH_EVENT_ONCE)).toEqual(
    [happened, undone].map((e) => ({
      invariant: EACH_EVENT_ONCE,
      detail: `probe-seq: ${e.type} ${e.eventId} has no sequenced claim on ${PK}: never applied, or applied without its claim`,
    })),
  );
});

test('the broken build drops the sequence condition: the duplicate is a second claim, and verify finds it', async () => {
  const broken = consumer({ bypassed: true });

  await broken.deliver(happened, happened, undone);

  expect(broken.judge()).toEqual([
    {
      invariant: EACH_EVENT_ONCE,
      detail: `probe-seq: ${PK} records 3 claims for its entity's 2 event(s): an event was applied more than once, or a stale one over a newer`,
    },
  ]);
});

test('the broken build applies a stale redelivery over the newer event: verify finds the older one on the item', async () => {
  const broken = consumer({ bypassed: true });

  await broken.deliver(happened, undone, happened);

  expect(broken.judge().map((v) => v.detail)).toEqual([
    expect.stringContaining(
      "its entity's newest event, is not the claim on EFFECT#probe-seq#thing-1: it holds thing-1:happened at seq 1",
    ),
    expect.stringContaining("records 3 claims for its entity's 2 event(s)"),
  ]);
});

test('a call still owed on the item after the drain fails: never made, never recorded done', async () => {
  const seq = consumer({ providerDown: true });

  await seq.deliver(happened, undone);

  expect(seq.judge()).toEqual([
    { invariant: 'provider', detail: 'no provider call under key probe-seq:thing-1:undone' },
    {
      invariant: 'provider',
      detail: `key probe-seq:thing-1:happened is still owed on ${PK}: its call was never recorded done (thing-1:happened)`,
    },
    {
      invariant: 'provider',
      detail: `key probe-seq:thing-1:undone is still owed on ${PK}: its call was never recorded done (thing-1:undone)`,
    },
  ]);
});
