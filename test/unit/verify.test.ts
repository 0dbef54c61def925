import { inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { consumerOutputNames, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { Observation } from '@exactly-once/tools/proof-kit/drive';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import type { Target } from '@exactly-once/tools/proof-kit/target';
import { checkInvariants, EVENT_REPLACED, verify, type RunFacts } from '@exactly-once/tools/proof-kit/verify';
import { eventFingerprint } from '@exactly-once/runtime/inbox/fingerprint';
import { PROBE_SPEC } from '../exactly-once/fixtures/probe-spec';
import { PROBE_STACK_CONSUMERS } from '../exactly-once/fixtures/probe-stack-consumers';
import { happenedEventOf, PROBE_PROOF, type ThingItem } from '../support/neutral-proof-domain';
import { tooling as probeTooling } from '../support/probe-tooling';
import { happenedEventIdOf, thingIdOf } from '../exactly-once/fixtures/probe-stack-things';

/**
 * The verification's own rules, on tables and queues the test sets (the proof
 * kit's matrix runs them against the real runtime), on the neutral fixture's
 * domain (things, PROBE_PROOF) and its probe consumers: a run without intents
 * must not pass, a third consumer is judged by the generic invariant, a claim
 * holding another event under a produced id is found.
 */
const doc = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);

// A third consumer the tests make up; its DLQ by its output name.
const AUDIT = 'audit';
const AUDIT_DLQ_OUTPUT = consumerOutputNames(AUDIT).deadLetterQueueUrl;

const CALLER = 'arn:aws:iam::000000000000:user/AKIALOADTEST0001';
const RUN = 'ltunit';
const target = {
  kind: 'local',
  name: 'unit',
  region: 'us-east-1',
  apiUrl: 'http://127.0.0.1:1',
  outputs: {
    ThingsTableName: 'things',
    EffectsTableName: 'effects',
    ProviderLogTableName: 'provider',
    ProbeDlqUrl: 'probe-dlq',
    ProbeFifoDlqUrl: 'probe-fifo-dlq',
    [AUDIT_DLQ_OUTPUT]: 'audit-dlq',
    RelayFailureQueueUrl: 'relay-failures',
  },
  callers: [],
  domain: probeTooling,
  dynamodb: new DynamoDBClient({ region: 'us-east-1' }),
  sqs: new SQSClient({ region: 'us-east-1' }),
  faultSwitch: { file: '/dev/null' },
  close: () => undefined,
} satisfies Target;

const plan: PlannedRequest[] = [
  {
    index: 0,
    op: 'new',
    caller: CALLER,
    method: 'POST',
    path: '/things',
    idempotencyKey: 'key-1',
    body: { ownerId: `${RUN}-o1`, amount: 1 },
  },
];
const thingId = thingIdOf(CALLER, 'key-1');
/** The thing the plan's request made, as the things table holds it. */
const thing: ThingItem = { entity: 'THING', thingId, status: 'HAPPENED', ownerId: `${RUN}-o1`, amount: 1 };

function tables(items: {
  things?: Record<string, unknown>[];
  effects?: Record<string, unknown>[];
  provider?: Record<string, unknown>[];
}): void {
  doc.on(ScanCommand, { TableName: 'things' }).resolves({ Items: items.things ?? [] });
  doc.on(ScanCommand, { TableName: 'effects' }).resolves({ Items: items.effects ?? [] });
  doc.on(ScanCommand, { TableName: 'provider' }).resolves({ Items: items.provider ?? [] });
}

/** The verification of the run on the probe consumers (or `consumers`) and the neutral fixture's domain. */
const verifyRun = (
  observations: Observation[],
  consumers: readonly ConsumerSpec[] = PROBE_STACK_CONSUMERS,
  on: Target = target,
) =>
  verify({
    target: on,
    runId: RUN,
    plan,
    observations,
    entityIdOf: thingIdOf,
    isPoison: () => false,
    pendingOutbox: 0,
    consumers,
    domain: PROBE_PROOF,
  });

const answered = (status: number, body?: string): Observation => ({
  index: 0,
  status,
  body,
  replayed: false,
  startedAt: 0,
  latencyMs: 1,
});

beforeEach(() => {
  doc.reset();
  sqs.reset();
  sqs.on(ReceiveMessageCommand).resolves({ Messages: [] });
});

test('a run in which no POST got a 201 (zero orders, zero intents) is a violation, not 0 == 0', async () => {
  tables({});

  const verification = await verifyRun([answered(500, '{"message":"Internal server error"}')]);

  expect(verification.counts).toMatchObject({ intents: 0, entities: 0 });
  expect(verification.violations).toEqual([
    { invariant: 'orders', detail: 'no POST got a 201: a run without intents proves nothing' },
  ]);
});

// --- A third consumer on the list: verified by the generic invariant, its DLQ read, nothing named by hand. ---
describe(`with a third consumer (${AUDIT}) on the consumer list`, () => {
  const audit = { ...PROBE_SPEC, name: AUDIT, eventTypes: ['ThingHappened'], providers: [AUDIT] };
  const consumers = [...PROBE_STACK_CONSUMERS, audit];
  const happened = happenedEventIdOf(thingId);
  const claim = (consumer: string) => ({
    pk: inboxKey(consumer, happened).pk,
    providerCallDoneAt: '2030-01-01T00:00:09Z',
  });
  const called = (consumer: string) => ({
    idempotencyKey: `${consumer}:${happened}`,
    calls: 1,
    firstCalledAt: '2030-01-01T00:00:01Z',
    lastCalledAt: '2030-01-01T00:00:01Z',
  });
  /** One thing, every effect right, each consumer's claim and call once, the third's included. */
  const cleanRun = () => ({
    things: [thing],
    effects: [
      { pk: `EFFECT#probe#${thingId}`, appliedCount: 1 },
      { pk: `EFFECT#probe-fifo#${thingId}`, appliedCount: 1, lastVersion: 1 },
      claim('probe'),
      claim('probe-fifo'),
      claim(AUDIT),
    ],
    provider: [called('probe'), called('probe-fifo'), called(AUDIT)],
  });
  const ok = () => [answered(201, JSON.stringify({ thingId }))];

  test('every consumer claimed the event and called its provider once: no violation', async () => {
    tables(cleanRun());

    const verification = await verifyRun(ok(), consumers);

    expect(verification.violations).toEqual([]);
  });

  test(`${AUDIT}'s missing claim is reported under the generic invariant`, async () => {
    const run = cleanRun();
    run.effects = run.effects.filter((e) => e.pk !== inboxKey(AUDIT, happened).pk);
    tables(run);

    const verification = await verifyRun(ok(), consumers);

    expect(verification.violations).toEqual([
      {
        invariant: 'each-event-once-per-consumer',
        detail: `${AUDIT}: ThingHappened ${happened} has no inbox claim ${inboxKey(AUDIT, happened).pk}: never applied, or applied without its claim`,
      },
    ]);
  });

  test(`a message in ${AUDIT}'s DLQ (found by its output name ${AUDIT_DLQ_OUTPUT}) is judged`, async () => {
    tables(cleanRun());
    sqs
      .on(ReceiveMessageCommand, { QueueUrl: 'audit-dlq' })
      .resolvesOnce({ Messages: [{ MessageId: 'm1', ReceiptHandle: 'r1', Body: `{"ownerId":"${RUN}-o1"}` }] })
      .resolves({ Messages: [] });

    const verification = await verifyRun(ok(), consumers);

    expect(verification.violations).toEqual([
      {
        invariant: 'dlq',
        detail: `${AUDIT} DLQ: message m1 (moved after maxReceiveCount): {"ownerId":"${RUN}-o1"}`,
      },
    ]);
  });

  test('a consumer on the list whose DLQ the stack does not output is a clear error, not a skipped queue', async () => {
    tables(cleanRun());
    const { [AUDIT_DLQ_OUTPUT]: _omitted, ...outputs } = target.outputs;

    await expect(verifyRun(ok(), consumers, { ...target, outputs })).rejects.toThrow(
      `The stack has no output ${AUDIT_DLQ_OUTPUT}`,
    );
  });
});

// --- A consumer that names no provider: judged on its claims alone, end to end. ---
describe('with a consumer that names no provider (ledger) on the list', () => {
  const LEDGER = 'ledger';
  const ledger = { ...PROBE_SPEC, name: LEDGER, eventTypes: ['ThingHappened'] };
  const consumers = [...PROBE_STACK_CONSUMERS, ledger];
  const happened = happenedEventIdOf(thingId);
  const called = (consumer: string) => ({ idempotencyKey: `${consumer}:${happened}`, calls: 1 });
  const onLedger = {
    ...target,
    outputs: { ...target.outputs, [consumerOutputNames(LEDGER).deadLetterQueueUrl]: 'ledger-dlq' },
  };
  /** One thing, every consumer's claim; calls only from the consumers that name a provider. */
  const run = (claims: string[]) => ({
    things: [thing],
    effects: [
      { pk: `EFFECT#probe#${thingId}`, appliedCount: 1 },
      { pk: `EFFECT#probe-fifo#${thingId}`, appliedCount: 1, lastVersion: 1 },
      ...claims.map((consumer) => ({
        pk: inboxKey(consumer, happened).pk,
        claimedAt: '2030-01-01T00:00:01Z',
        ...(consumer === LEDGER ? {} : { providerCallDoneAt: '2030-01-01T00:00:09Z' }),
      })),
    ],
    provider: [called('probe'), called('probe-fifo')],
  });
  const ok = () => [answered(201, JSON.stringify({ thingId }))];

  test('its claim stored and no provider call of its own: the run passes', async () => {
    tables(run(['probe', 'probe-fifo', LEDGER]));

    const verification = await verifyRun(ok(), consumers, onLedger);

    expect(verification.violations).toEqual([]);
    expect(verification.appliedEffects[LEDGER]).toBe(1);
  });

  test('its claim missing: the run fails, though it owed no call', async () => {
    tables(run(['probe', 'probe-fifo']));

    const verification = await verifyRun(ok(), consumers, onLedger);

    expect(verification.violations).toEqual([
      {
        invariant: 'each-event-once-per-consumer',
        detail: `${LEDGER}: ThingHappened ${happened} has no inbox claim ${inboxKey(LEDGER, happened).pk}: never applied, or applied without its claim`,
      },
    ]);
  });
});

test("a consumer's metrics are read under its spec name, hyphens included", () => {
  const verification = checkInvariants({
    runId: RUN,
    checkIntents: false,
    plan,
    observations: [],
    entityIdOf: thingIdOf,
    isPoison: () => false,
    pendingOutbox: 0,
    domain: PROBE_PROOF,
    consumers: PROBE_STACK_CONSUMERS,
    metrics: { 'DuplicateSuppressed{consumer=gift-cards}': 3, 'EffectApplied{consumer=gift-cards}': 7 },
    entities: [],
    effectItems: [],
    providerItems: [],
    deadLetterQueues: [],
  });

  expect(verification.consumerMetrics['gift-cards']).toEqual({ DuplicateSuppressed: 3, EffectApplied: 7 });
  expect(verification.duplicatesSuppressed['gift-cards']).toBe(3);
});

test('one key answered 201 to two different request bodies is a replay violation: a key reused with another body must be refused', () => {
  const reused: PlannedRequest = {
    ...plan[0],
    index: 1,
    op: 'retry-sequential',
    body: { ...plan[0].body!, ownerId: `${RUN}-o2` },
  };
  const firstAnswer = JSON.stringify({ thingId, ownerId: `${RUN}-o1` });
  const facts = (requests: PlannedRequest[]) =>
    checkInvariants({
      runId: RUN,
      plan: requests,
      observations: [answered(201, firstAnswer), { ...answered(201, firstAnswer), index: 1, replayed: true }],
      entityIdOf: thingIdOf,
      isPoison: () => false,
      pendingOutbox: 0,
      domain: PROBE_PROOF,
      consumers: PROBE_STACK_CONSUMERS,
      entities: [thing],
      effectItems: [],
      providerItems: [],
      deadLetterQueues: [],
    }).violations.filter((v) => v.invariant === 'replay');

  expect(facts([plan[0], reused])).toEqual([
    { invariant: 'replay', detail: `key ${CALLER} key-1: 201 for 2 different request bodies` },
  ]);
  expect(facts([plan[0], { ...plan[0], index: 1, op: 'retry-sequential' }])).toEqual([]);
});

describe('what a claim holds, and events refused as stamped in the future', () => {
  const produced = { ...happenedEventOf(thing), occurredAt: '2026-12-05T10:00:00.000Z' };
  const forged = PROBE_PROOF.forgedCreateEvent!(plan[0], '2026-12-05T10:00:00.000Z')!;
  const claims = (fingerprint: string) =>
    PROBE_STACK_CONSUMERS.map((c) => ({
      ...inboxKey(c.name, produced.eventId),
      claimedAt: '2026-12-05T10:00:01.000Z',
      fingerprint,
    }));
  const judged = (effectItems: Record<string, unknown>[], deadLetterQueues: RunFacts['deadLetterQueues'] = []) =>
    checkInvariants({
      runId: RUN,
      checkIntents: false,
      plan,
      observations: [],
      entityIdOf: thingIdOf,
      isPoison: () => false,
      pendingOutbox: 0,
      domain: PROBE_PROOF,
      consumers: PROBE_STACK_CONSUMERS,
      entities: [thing],
      effectItems,
      providerItems: [],
      deadLetterQueues,
    }).violations;

  test("a claim holding another event under a produced event's id is reported as event-replaced, per consumer; its own content is not", () => {
    const replaced = judged(claims(eventFingerprint(forged))).filter((v) => v.invariant === EVENT_REPLACED);
    const own = judged(claims(eventFingerprint(produced))).filter((v) => v.invariant === EVENT_REPLACED);

    expect(forged.eventId).toBe(produced.eventId);
    expect(replaced.map((v) => v.detail.split(':')[0]).sort()).toEqual(PROBE_STACK_CONSUMERS.map((c) => c.name).sort());
    expect(own).toEqual([]);
  });

  test('an event refused as OccurredInFuture is a finding for a person, never passed', () => {
    const refused = {
      MessageId: 'm-future',
      Body: JSON.stringify({ ...produced, occurredAt: '2026-12-06T10:00:00.000Z' }),
      MessageAttributes: { failureCause: { DataType: 'String', StringValue: 'OccurredInFuture' } },
    };

    const violations = judged(claims(eventFingerprint(produced)), [{ name: 'probe DLQ', messages: [refused] }]);

    expect(violations).toContainEqual({
      invariant: 'occurred-in-future',
      detail: `probe DLQ: message m-future: eventId ${produced.eventId} stamped 2026-12-06T10:00:00.000Z, beyond the clock-skew margin: for a person to look at`,
    });
    expect(violations.filter((v) => v.invariant === 'dlq')).toEqual([]);
  });
});
