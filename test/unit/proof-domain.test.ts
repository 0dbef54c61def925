import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { ProofDomain } from '@exactly-once/tools/proof-kit/domain';
import type { Observation } from '@exactly-once/tools/proof-kit/drive';
import type { PlannedRequest } from '@exactly-once/tools/proof-kit/plan';
import { checkInvariants, type RunFacts } from '@exactly-once/tools/proof-kit/verify';
import { proofDomainOf } from '@exactly-once/tools/domain-parts';
import type { ExampleTooling } from '@exactly-once/tools/domain';

/**
 * The proof kit judges whatever domain the example plugs in (packages/tools/src/proof-kit/domain.ts): here a
 * made-up bookings domain, its entities keyed `bookingId`, one event per booking, one FIFO consumer
 * with a provider. The kit's own invariants (an entity per 201'd key, each event once per consumer,
 * each owed provider key performed once) hold or fail on it exactly as on the shop.
 */
const CALLER = 'arn:aws:iam::123456789012:user/ci';
const bookingIdOf = (_caller: string, key: string) => `bk_${key}`;
const AUDIT: ConsumerSpec = {
  name: 'audit',
  fifo: true,
  eventTypes: ['BookingConfirmed'],
  entry: 'lambdas/sample-domain/entry-points/audit-consumer.ts',
  providers: ['audit-log'],
  batchSize: 10,
  batchingWindowSeconds: 0,
  maxConcurrency: 2,
};

const BOOKINGS: ProofDomain = {
  entityNoun: 'bookings',
  entityNounSingular: 'booking',
  entityTableOutput: 'BookingsTableName',
  isEntityOfRun: (item) => item.entity === 'BOOKING',
  idOf: (entity) => String(entity.bookingId),
  buildPlan: () => [],
  entityIdOf: bookingIdOf,
  createdEventIdOf: (bookingId) => `${bookingId}.confirmed`,
  producedEvents: (entities) =>
    entities.map((b) => ({
      eventId: `${String(b.bookingId)}.confirmed`,
      type: 'BookingConfirmed',
      entityId: String(b.bookingId),
    })),
  checkEffects: (entities) => ({ violations: [], summary: `${entities.length} nights` }),
};

const plan: PlannedRequest[] = [
  {
    index: 0,
    op: 'new',
    caller: CALLER,
    method: 'POST',
    path: '/bookings',
    idempotencyKey: 'k1',
    body: { room: 'r1' },
  },
];
const created: Observation = {
  index: 0,
  status: 201,
  body: JSON.stringify({ bookingId: 'bk_k1' }),
  replayed: false,
  startedAt: 0,
  latencyMs: 1,
};
const claim = {
  pk: 'INBOX#audit#bk_k1.confirmed',
  claimedAt: '2026-01-01T00:00:00.000Z',
  providerCallDoneAt: '2026-01-01T00:00:01.000Z',
};
const call = { idempotencyKey: 'audit:bk_k1.confirmed', calls: 1 };

function facts(overrides: Partial<RunFacts> = {}): RunFacts {
  return {
    runId: 'run',
    plan,
    observations: [created],
    entityIdOf: bookingIdOf,
    isPoison: () => false,
    pendingOutbox: 0,
    entities: [{ entity: 'BOOKING', bookingId: 'bk_k1' }],
    effectItems: [claim],
    providerItems: [call],
    deadLetterQueues: [],
    consumers: [AUDIT],
    domain: BOOKINGS,
    ...overrides,
  };
}

test("another domain's run: one booking for its key, its event claimed and its provider key called once: no violation", () => {
  // Act
  const verification = checkInvariants(facts());

  // Assert
  expect(verification.violations).toEqual([]);
  expect(verification).toMatchObject({
    counts: { intents: 1, entities: 1, providerKeys: 1 },
    entityNoun: 'bookings',
    entityNounSingular: 'booking',
    effectsChecked: '1 nights',
    appliedEffects: { audit: 1 },
  });
});

test("another domain's run: an event never claimed and its key never called are violations named by the domain's ids", () => {
  // Act
  const verification = checkInvariants(facts({ effectItems: [], providerItems: [] }));

  // Assert
  expect(verification.violations).toEqual([
    {
      invariant: 'each-event-once-per-consumer',
      detail:
        'audit: BookingConfirmed bk_k1.confirmed has no inbox claim INBOX#audit#bk_k1.confirmed: never applied, or applied without its claim',
    },
    { invariant: 'provider', detail: 'no provider call under key audit:bk_k1.confirmed' },
  ]);
});

test("another domain's run: a 201 whose booking is not in the table is a missing entity", () => {
  // Act
  const verification = checkInvariants(facts({ entities: [], effectItems: [], providerItems: [] }));

  // Assert
  expect(verification.violations).toEqual([
    { invariant: 'orders', detail: 'key arn:aws:iam::123456789012:user/ci k1: got 201 but bk_k1 is missing' },
  ]);
});

test('an example without a proof domain: the kit refuses, saying what is missing', () => {
  // Arrange
  const tooling: ExampleTooling = {
    consumers: [],
    outboxTableOutput: 'T',
    isEvent: () => false,
    scaffold: { folder: 'x', eventTypes: [] },
  };

  // Act and assert
  expect(() => proofDomainOf(tooling)).toThrow("The example's tooling module gives no proof domain (`proof`");
});
