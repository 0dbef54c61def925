import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { applyEntityEffect, type EventEnvelope } from '@exactly-once/runtime';
import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws';
import type { LedgerOptions } from '@exactly-once/runtime/aws/inbox-ledger';
import { OutageProneProvider } from '@exactly-once/runtime/faults/outage-prone-provider';
import { InjectedProviderOutage, NO_FAULTS, parseFaultPlan, type FaultPlan } from '@exactly-once/runtime/faults/plan';
import { faultPlanOf, FAULT_SWITCH_DELAY_MS } from '@exactly-once/tools/proof-kit/faults';
import type { ExternalProvider } from '@exactly-once/runtime/provider/provider';
import { callProviderIfOwed } from '@exactly-once/runtime/provider/call-provider-if-owed';
import { thingHappened, thingUndone } from '../exactly-once/fixtures/probe-events';
import { PROBE_FIFO_SPEC, PROBE_SPEC } from '../exactly-once/fixtures/probe-spec';
import { applyStatefulEffect, ProbeStatefulLedger, stateKey } from '../exactly-once/fixtures/probe-stateful-consumer';
import { recordWork } from '../support/record-work';

/**
 * Provider calls that respect what already happened, at the ledger and effect
 * level with the document client mocked, on the neutral fixture's generic
 * entity effect (the probe consumers): the inbox entry records the call done
 * (or superseded by a later event of the entity), and a duplicate learns both
 * from the entry its failed claim returns, never from a read.
 */

const TABLE = 'effects';
const NOW = new Date('2030-01-02T03:04:05.000Z');
const doc = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const options = { tableName: TABLE, inboxTtlSeconds: 1_000, now: () => NOW };

const happened = thingHappened('thing-1', { occurredAt: NOW.toISOString() });
const undone = thingUndone('thing-1', { occurredAt: NOW.toISOString() });

function recordingProvider(): ExternalProvider & { keys: string[]; send: jest.Mock } {
  const keys: string[] = [];
  const send = jest.fn(async (key: string) => {
    keys.push(key);
  });
  return { keys, send };
}

/** The cancellation DynamoDB returns when the claim's entry exists: its old image (ALL_OLD) on reason 0. */
function claimTaken(entry: Record<string, unknown>, items: number) {
  return new TransactionCanceledException({
    message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed]',
    $metadata: {},
    CancellationReasons: [
      { Code: 'ConditionalCheckFailed', Item: marshall(entry) },
      ...Array.from({ length: items - 1 }, () => ({ Code: 'None' })),
    ],
  });
}

const inboxEntry = (consumer: string, eventId: string, extra: Record<string, unknown> = {}) => ({
  pk: `INBOX#${consumer}#${eventId}`,
  sk: 'INBOX',
  consumer,
  eventId,
  claimedAt: '2030-01-02T02:04:05.000Z', // an hour before NOW: well inside the provider's key window
  expiresAt: 1_900_000_000,
  ...extra,
});

/** The items of a probe consumer's transaction: the claim and the entity effect. */
const ITEMS = 2;

/** A probe consumer's generic entity effect on a ledger over the mocked document client. */
function applyAs(
  spec: typeof PROBE_SPEC,
  event: EventEnvelope,
  provider: ExternalProvider = recordingProvider(),
  ledgerOptions: Partial<LedgerOptions> = {},
) {
  const ledger = new DynamoDbEntityEffectLedger(client, { ...options, consumer: spec.name, ...ledgerOptions });
  return applyEntityEffect(event, { consumer: spec.name, eventTypes: spec.eventTypes, ledger, provider });
}
const probe = (event: EventEnvelope, provider?: ExternalProvider) => applyAs(PROBE_SPEC, event, provider);
const probeFifo = (event: EventEnvelope, provider?: ExternalProvider) => applyAs(PROBE_FIFO_SPEC, event, provider);

const transactions = () => doc.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems ?? []);
const doneMarks = () => doc.commandCalls(UpdateCommand).map((c) => c.args[0].input);
const commandNames = () => doc.calls().map((c) => c.args[0].constructor.name);

beforeEach(() => {
  doc.reset();
  doc.on(TransactWriteCommand).resolves({});
  doc.on(UpdateCommand).resolves({});
});

describe('first delivery', () => {
  test('the claim asks for the existing entry on failure (ALL_OLD), so a duplicate needs no read', async () => {
    await probe(happened);

    const [claim] = transactions()[0];
    expect(claim.Put).toMatchObject({
      Item: { pk: `INBOX#probe#${happened.eventId}` },
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  test('applied: the provider is called, then the call is recorded done on the inbox entry (conditioned on it existing)', async () => {
    const provider = recordingProvider();

    const outcome = await probe(happened, provider);

    expect(outcome).toBe('applied');
    expect(provider.keys).toEqual([`probe:${happened.eventId}`]);
    expect(doneMarks()).toEqual([
      {
        TableName: TABLE,
        Key: { pk: `INBOX#probe#${happened.eventId}`, sk: 'INBOX' },
        UpdateExpression: 'SET #done = :at',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#done': 'providerCallDoneAt' },
        ExpressionAttributeValues: { ':at': NOW.toISOString() },
      },
    ]);
    expect(commandNames()).toEqual(['TransactWriteCommand', 'UpdateCommand']);
  });

  test('a provider failure propagates (transient) and nothing is recorded: the call stays owed', async () => {
    const provider = recordingProvider();
    provider.send.mockRejectedValueOnce(new Error('provider 503'));

    await expect(probe(happened, provider)).rejects.toThrow('provider 503');
    expect(doneMarks()).toEqual([]);
  });
});

describe('duplicates', () => {
  test('after a completed call: the provider is not called again, and no read was issued', async () => {
    doc
      .on(TransactWriteCommand)
      .rejects(
        claimTaken(inboxEntry('probe', happened.eventId, { providerCallDoneAt: '2030-01-01T00:00:01Z' }), ITEMS),
      );
    const provider = recordingProvider();

    const outcome = await probe(happened, provider);

    expect(outcome).toBe('duplicate');
    expect(provider.keys).toEqual([]);
    expect(commandNames()).toEqual(['TransactWriteCommand']); // no GetItem, no mark
    expect(doc.commandCalls(GetCommand)).toHaveLength(0);
  });

  test('after a crash between the effect and the provider call: the provider is called once more, then recorded', async () => {
    doc.on(TransactWriteCommand).rejects(claimTaken(inboxEntry('probe', happened.eventId), 3));
    const provider = recordingProvider();

    const outcome = await probe(happened, provider);

    expect(outcome).toBe('duplicate');
    expect(provider.keys).toEqual([`probe:${happened.eventId}`]);
    expect(doneMarks().map((m) => m.Key)).toEqual([{ pk: `INBOX#probe#${happened.eventId}`, sk: 'INBOX' }]);
    expect(commandNames()).toEqual(['TransactWriteCommand', 'UpdateCommand']);
  });

  test('a redriven event whose entry a later event of its entity superseded meanwhile: no call, though its call never completed', async () => {
    doc
      .on(TransactWriteCommand)
      .rejects(claimTaken(inboxEntry('probe-fifo', happened.eventId, { supersededBy: undone.eventId }), ITEMS));
    const provider = recordingProvider();

    const outcome = await probeFifo(happened, provider);

    expect(outcome).toBe('duplicate');
    expect(provider.keys).toEqual([]);
    expect(commandNames()).toEqual(['TransactWriteCommand']);
  });

  test('probe-fifo: the provider call is not repeated once recorded done', async () => {
    doc
      .on(TransactWriteCommand)
      .rejects(
        claimTaken(inboxEntry('probe-fifo', happened.eventId, { providerCallDoneAt: '2030-01-01T00:00:01Z' }), ITEMS),
      );
    const provider = recordingProvider();

    const outcome = await probeFifo(happened, provider);

    expect(outcome).toBe('duplicate');
    expect(provider.keys).toEqual([]);
    expect(commandNames()).toEqual(['TransactWriteCommand']);
  });

  test('probe-fifo: a duplicate whose call was never recorded makes it once more, then records it', async () => {
    doc.on(TransactWriteCommand).rejects(claimTaken(inboxEntry('probe-fifo', happened.eventId), ITEMS));
    const provider = recordingProvider();

    await probeFifo(happened, provider);

    expect(provider.keys).toEqual([`probe-fifo:${happened.eventId}`]);
    expect(doneMarks().map((m) => m.Key?.pk)).toEqual([`INBOX#probe-fifo#${happened.eventId}`]);
  });

  test.each([
    ['probe', (provider: ExternalProvider) => probe(happened, provider)],
    ['probe-fifo', (provider: ExternalProvider) => probeFifo(happened, provider)],
  ] as const)(
    '%s: a duplicate whose call has been owed longer than the provider keeps keys is dead-lettered, never called',
    async (consumer, deliver) => {
      // Claimed 23 h and a second ago: past the 24 h key window less its 1 h margin.
      const claimedAt = new Date(NOW.getTime() - (23 * 3_600 + 1) * 1000).toISOString();
      doc.on(TransactWriteCommand).rejects(claimTaken(inboxEntry(consumer, happened.eventId, { claimedAt }), ITEMS));
      const provider = recordingProvider();

      const delivered = deliver(provider);

      await expect(delivered).rejects.toMatchObject({
        name: 'PermanentError',
        permanentCause: 'ProviderKeyWindowPassed',
      });
      expect(provider.send).not.toHaveBeenCalled();
      expect(doneMarks()).toEqual([]);
    },
  );

  test("a provider that keeps keys longer, given as the ledger's window: the same late duplicate is called", async () => {
    const claimedAt = new Date(NOW.getTime() - 30 * 3_600_000).toISOString();
    doc.on(TransactWriteCommand).rejects(claimTaken(inboxEntry('probe', happened.eventId, { claimedAt }), ITEMS));
    const provider = recordingProvider();

    await applyAs(PROBE_SPEC, happened, provider, { providerKeyWindowSeconds: 7 * 86_400 });

    expect(provider.keys).toEqual([`probe:${happened.eventId}`]);
  });
});

describe('a consumer with a state of its own: the later event supersedes the earlier one in its transaction', () => {
  const stateful = (event: EventEnvelope, provider = recordingProvider()) =>
    applyStatefulEffect(event, {
      consumer: 'probe-stateful',
      ledger: new ProbeStatefulLedger(client, { ...options, consumer: 'probe-stateful' }),
      provider,
    });

  test('an undo applied from HAPPENED marks the ThingHappened inbox entry superseded, in the same transaction', async () => {
    await stateful(undone);

    const items = transactions()[0];
    expect(items[1].Update).toMatchObject({
      Key: stateKey('probe-stateful', 'thing-1'),
      ConditionExpression: 'version = :happened',
    });
    expect(items.at(-1)?.Update).toEqual({
      TableName: TABLE,
      Key: { pk: `INBOX#probe-stateful#${happened.eventId}`, sk: 'INBOX' },
      UpdateExpression:
        'SET #superseded = :by, #entity = :entity, #version = :version, #ttl = if_not_exists(#ttl, :expires)',
      ExpressionAttributeNames: {
        '#superseded': 'supersededBy',
        '#entity': 'supersededByEntityId',
        '#version': 'supersededByVersion',
        '#ttl': 'expiresAt',
      },
      ExpressionAttributeValues: {
        ':by': undone.eventId,
        ':entity': undone.entityId,
        ':version': undone.version,
        ':expires': Math.floor(NOW.getTime() / 1000) + 1_000,
      },
    });
  });

  test('a ThingHappened whose state an undo already moved on is stale: acked, no provider call', async () => {
    doc.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message:
          'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]',
        $metadata: {},
        CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }],
      }),
    );
    const provider = recordingProvider();

    const outcome = await stateful(happened, provider);

    expect(outcome).toBe('stale');
    expect(provider.keys).toEqual([]);
    expect(doneMarks()).toEqual([]);
  });
});

describe('the provider-outage fault', () => {
  const window = { from: '2030-01-02T03:04:00.000Z', until: '2030-01-02T03:04:10.000Z' };

  test.each([
    { what: 'inside the window', plan: { providerOutageWindow: window }, at: '2030-01-02T03:04:05.000Z', down: true },
    { what: 'at the window end', plan: { providerOutageWindow: window }, at: '2030-01-02T03:04:10.000Z', down: false },
    { what: 'before the window', plan: { providerOutageWindow: window }, at: '2030-01-02T03:03:59.999Z', down: false },
    {
      what: 'the roll hits',
      plan: { providerOutage: 0.5, random: () => 0.49 },
      at: '2030-01-02T04:00:00Z',
      down: true,
    },
    {
      what: 'the roll misses',
      plan: { providerOutage: 0.5, random: () => 0.5 },
      at: '2030-01-02T04:00:00Z',
      down: false,
    },
    { what: 'no plan', plan: NO_FAULTS, at: '2030-01-02T03:04:05.000Z', down: false },
    {
      what: 'inside the window of another provider',
      plan: { providerOutageWindow: window, providerOutageProviders: ['other'] },
      at: '2030-01-02T03:04:05.000Z',
      down: false,
    },
    {
      what: 'inside the window of this provider',
      plan: { providerOutageWindow: window, providerOutageProviders: ['other', 'probe'] },
      at: '2030-01-02T03:04:05.000Z',
      down: true,
    },
  ] as { what: string; plan: FaultPlan; at: string; down: boolean }[])(
    '$what: the call fails before reaching the provider: $down',
    async ({ plan, at, down }) => {
      const inner = recordingProvider();
      const provider = new OutageProneProvider(
        inner,
        'probe',
        () => plan,
        () => new Date(at),
      );

      const sent = provider.send('probe:e1', { eventId: 'e1' });

      if (down) await expect(sent).rejects.toBeInstanceOf(InjectedProviderOutage);
      else await expect(sent).resolves.toBeUndefined();
      expect(inner.keys).toEqual(down ? [] : ['probe:e1']);
    },
  );

  test('the plan carries the window and the rate through JSON; a malformed window is dropped', () => {
    const plan = faultPlanOf(
      { enabled: ['provider-outage'], rate: 0.2, slowSeconds: 0, poisonPerQueue: 0, providerOutageSeconds: 7 },
      42,
      NOW,
    );
    // A plan is read only before its expiry (see test/unit/faults.test.ts).
    const expiresAt = new Date(NOW.getTime() + 60_000).toISOString();
    const read = (raw: object) => parseFaultPlan({ ...raw, expiresAt }, 0, NOW.getTime());
    const parsed = read(JSON.parse(JSON.stringify(plan)));
    const reversed = read({ providerOutageWindow: { from: window.until, until: window.from } });
    const onlyProbe = read({ providerOutageProviders: ['probe', 7] });

    expect(parsed.providerOutage).toBe(0.2);
    expect(parsed.providerOutageWindow).toEqual(plan.providerOutageWindow);
    const from = Date.parse(plan.providerOutageWindow!.from);
    expect(from - NOW.getTime()).toBeGreaterThanOrEqual(FAULT_SWITCH_DELAY_MS);
    expect(from - NOW.getTime()).toBeLessThan(FAULT_SWITCH_DELAY_MS + 5_000);
    expect(Date.parse(plan.providerOutageWindow!.until) - from).toBe(7_000);
    // The same seed gives the same window.
    expect(
      faultPlanOf(
        { enabled: ['provider-outage'], rate: 0.2, slowSeconds: 0, poisonPerQueue: 0, providerOutageSeconds: 7 },
        42,
        NOW,
      ).providerOutageWindow,
    ).toEqual(plan.providerOutageWindow);
    expect(reversed.providerOutageWindow).toBeUndefined();
    expect(onlyProbe.providerOutageProviders).toEqual(['probe']);
  });
});

describe('the provider-call lease after a failed call', () => {
  const recordOf = (released: string[]) => ({
    consumer: 'probe',
    recordProviderCallDone: async () => undefined,
    leaseProviderCall: async () => 'granted' as const,
    releaseProviderCallLease: async ({ eventId }: { eventId: string }) => void released.push(eventId),
  });
  const applied = { outcome: 'applied' as const, providerCallPending: true };

  test('a call cut at the deadline keeps its lease (it may still land); one that failed on its own gives it back', async () => {
    const released: string[] = [];
    const record = recordOf(released);
    const cutAtDeadline = recordWork();
    const failedOnItsOwn = recordWork();
    const abortable = (signal: AbortSignal | undefined) =>
      new Promise<void>((_, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted'))));

    const cut = callProviderIfOwed(applied, { eventId: 'evt-cut' }, record, abortable, cutAtDeadline.work);
    cutAtDeadline.controller.abort();
    await expect(cut).rejects.toThrow('aborted');
    await expect(
      callProviderIfOwed(
        applied,
        { eventId: 'evt-503' },
        record,
        () => Promise.reject(new Error('503')),
        failedOnItsOwn.work,
      ),
    ).rejects.toThrow('503');

    expect(released).toEqual(['evt-503']);
  });
});
