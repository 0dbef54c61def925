import { failed } from '../../tools/simulation/campaign';
import {
  ALL_GUARDS,
  DEFAULT_FAULTS,
  simulate,
  simulationOptions,
  type FaultRates,
  type Guards,
  type SimulationOptions,
  type SimulationResult,
  World,
} from '../../tooling/shop/simulation/world';
import { EFFECTS_TABLE } from '../../tooling/shop/simulation/tables';

/**
 * Each guard switched off (test-only, in the simulation's wiring; production
 * code is unchanged) must be caught within a bounded number of seeds: the
 * simulation is only worth its green runs if it turns red when a guard is
 * missing. Each test runs schedules 1, 2, ... until one violates the invariant
 * the guard protects, and checks that the same schedule with every guard on
 * holds it. The seed each one needed is in the guard table of docs/simulation.md.
 */
const ORDERS = 100;

async function firstSeedWhere(
  options: Partial<SimulationOptions>,
  guards: Partial<Guards>,
  violates: (r: SimulationResult) => boolean,
  maxSeeds: number,
) {
  for (let seed = 1; seed <= maxSeeds; seed++) {
    const broken = await simulate(
      simulationOptions({ orders: ORDERS, ...options, guards: { ...ALL_GUARDS, ...guards }, seed }),
    );
    if (violates(broken)) {
      const guarded = await simulate(simulationOptions({ orders: ORDERS, ...options, seed }));
      return { seed, guarded };
    }
  }
  return undefined;
}

const violated = (invariant: string) => (r: SimulationResult) =>
  r.verification.violations.some((v) => v.invariant === invariant);

test('without the inbox claim, a redelivered event is applied twice: found within 3 seeds', async () => {
  const found = await firstSeedWhere({}, { inboxClaim: false }, violated('points'), 3);

  expect(found?.seed).toBeLessThanOrEqual(3);
  expect(failed(found!.guarded)).toBe(false);
});

test('with the inbox claim keyed on the SQS messageId, a resent or republished event is applied twice: found within 5 seeds', async () => {
  const found = await firstSeedWhere({}, { dedupeOn: 'messageId' }, violated('points'), 5);

  expect(found?.seed).toBeLessThanOrEqual(5);
  expect(failed(found!.guarded)).toBe(false);
});

test('without the fulfilment version check, a cancel that overtakes its place releases stock never reserved: found within 3 seeds', async () => {
  // The overtaking the deployed design allows: an OrderPlaced outbox item that misses the stream (here
  // 'stream-record-lost'; in AWS, the relay's retries exhausted to its on-failure queue) is published by
  // the sweeper only once it is 5 minutes old, while the order's cancel (0 to 2 minutes after the
  // place) goes through the stream at once, so OrderCancelled reaches the FIFO group first. (A conflict
  // storm cannot dead-letter the place instead: 3 contention retries in each of 14 tries outlast it.)
  // One SKU per order makes each order's stock visible on its own.
  const overtaking: Partial<SimulationOptions> = {
    faults: { ...DEFAULT_FAULTS, streamRecordLost: 0.05 },
    cancelChance: 0.8,
    skus: 1_000_000,
  };
  // Stock can only go below zero when a release took away what no reserve added.
  const releasedUnreserved = (r: SimulationResult) =>
    r.verification.violations.some((v) => v.invariant === 'reserved' && /: reserved -\d+,/.test(v.detail));

  const found = await firstSeedWhere(overtaking, { versionCheck: false }, releasedUnreserved, 3);

  expect(found?.seed).toBeLessThanOrEqual(3);
  expect(releasedUnreserved(found!.guarded)).toBe(false);
  expect(failed(found!.guarded)).toBe(false);
  // The guarded run took the path the check exists for: a cancel recorded before any reserve.
  const guardedWorld = new World(simulationOptions({ orders: ORDERS, ...overtaking, seed: found!.seed }));
  await guardedWorld.run();
  const cancelledFirst = guardedWorld.db.items(EFFECTS_TABLE).filter((i) => i.state === 'CANCELLED_UNRESERVED');
  expect(cancelledFirst.length).toBeGreaterThan(0);
});

test('with the old retry budget (5 receives, full jitter from 2 s), a two-minute provider outage dead-letters live messages: found within 2 seeds', async () => {
  // Longer than the old budget (about 30 s), far inside the deployed 15 minutes. No operator redrive.
  const outage: Partial<SimulationOptions> = {
    faults: { ...DEFAULT_FAULTS, providerOutages: 1, providerOutageSeconds: [120, 120], longOutageChance: 0 },
    redriveDlqsAfterSeconds: undefined,
  };

  const found = await firstSeedWhere(outage, { retryBudget: 'seconds' }, violated('dlq'), 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
});

test('with a duplicate calling the provider whatever happened since, a redrive after a cancel sends PICK after CANCEL_PICK: found within 3 seeds', async () => {
  // A warehouse outage longer than the budget dead-letters OrderPlaced messages whose reserve committed;
  // their orders are cancelled meanwhile (CANCEL_PICK sent once the warehouse is back), then the operator redrives.
  const outageThenRedrive: Partial<SimulationOptions> = {
    faults: longWarehouseOutage(),
    cancelChance: 0.8,
  };

  const found = await firstSeedWhere(outageThenRedrive, { providerCompletion: false }, violated('provider-order'), 3);

  expect(found?.seed).toBeLessThanOrEqual(3);
  expect(failed(found!.guarded)).toBe(false);
});

test('with keys scoped to the session, a retry from rotated credentials creates a second order: found within 2 seeds', async () => {
  const rotation = { faults: { ...DEFAULT_FAULTS, credentialRotation: 0.5 } };

  const found = await firstSeedWhere(rotation, { callerScope: 'session' }, violated('orders'), 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
});

test('without the record deadline, a hung call holds its batch until Lambda stops the consumer, and none of the batch is acked: found within 2 seeds', async () => {
  // A consumer stopped by its timeout breaks no invariant (its messages come back after their visibility
  // timeout), so the trace tells: Lambda stopped a consumer. Calls hang ten times as often as by default
  // (as in timeouts.test.ts), so each schedule has a few.
  const hangs: Partial<SimulationOptions> = {
    faults: { ...DEFAULT_FAULTS, timeoutPerCall: 0.01 },
    keepTrace: Number.MAX_SAFE_INTEGER,
  };
  const stoppedConsumers = (r: SimulationResult) =>
    r.trace.flatMap((line) => /FAULT timeout: ((?:fulfilment|loyalty)#\d+) stopped/.exec(line)?.[1] ?? []);
  const consumerStopped = (r: SimulationResult) =>
    stoppedConsumers(r).some((name) => r.trace.some((line) => line.endsWith(`${name} acked nothing (timed out)`)));

  const found = await firstSeedWhere(hangs, { recordDeadline: false }, consumerStopped, 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
  expect(stoppedConsumers(found!.guarded)).toEqual([]);
  expect(found!.guarded.consequences['record-deadline']).toBeGreaterThan(0);
});

test('without the dedupe horizon, a redrive weeks later, after DynamoDB TTL deleted the inbox claim, credits the points again: found within 2 seeds', async () => {
  const found = await firstSeedWhere(weeksOfRedrives(), { dedupeHorizon: false }, violated('points'), 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
  // With the horizon, the events still circulating are refused once too old: they sit in the loyalty
  // DLQ with their cause (applied once, their e-mail for a person to send).
  expect(found!.guarded.verification.deadLetters).toContainEqual(
    expect.objectContaining({ queue: 'loyalty DLQ', cause: expect.stringMatching(/^DedupeHorizonPassed/) }),
  );
  expect(found!.guarded.virtualSeconds).toBeGreaterThan(50 * DAY_SECONDS);
});

test('without the provider-call lease, concurrent copies of an event (standard-queue duplicates) call the provider under one key at once: found within 2 seeds', async () => {
  const found = await firstSeedWhere({}, { providerCallLease: false }, violated('provider-overlap'), 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
  expect(found!.guarded.providerOverlaps).toEqual([]);
});

test("without the queues' sender policy, forged copies that reach a consumer before the real event are found: found within 1 seed", async () => {
  const forging: Partial<SimulationOptions> = { faults: { ...DEFAULT_FAULTS, forgedFirst: 0.1 } };

  const found = await firstSeedWhere(forging, { queueSenders: false }, violated('event-id-reused'), 1);

  expect(found?.seed).toBe(1);
  expect(failed(found!.guarded)).toBe(false);
  expect(found!.guarded.faults['forged-send-denied']).toBeGreaterThan(0);
});

test('without the fingerprint in the claim, a forged copy and the real event under one id: one is taken for a duplicate of the other and lost unseen: found within 1 seed', async () => {
  const forging: Partial<SimulationOptions> = { faults: { ...DEFAULT_FAULTS, forgedFirst: 0.1 } };
  const pastThePolicy = { ...ALL_GUARDS, queueSenders: false };

  const lost = await simulate(
    simulationOptions({ orders: ORDERS, ...forging, guards: { ...pastThePolicy, fingerprint: false }, seed: 1 }),
  );
  const caught = await simulate(simulationOptions({ orders: ORDERS, ...forging, guards: pastThePolicy, seed: 1 }));

  expect(violated('event-lost')(lost)).toBe(true);
  expect(violated('event-id-reused')(lost)).toBe(false);
  // With the fingerprint, every pair is caught: one of the two sits in the DLQ as EventIdReused, a
  // finding for a person (the run fails: never a pass), and no event is lost unseen.
  expect(violated('event-lost')(caught)).toBe(false);
  expect(caught.verification.deadLetters).toContainEqual(
    expect.objectContaining({ cause: 'EventIdReused', expected: false }),
  );
  expect(failed(caught)).toBe(true);
});

test('without the ClientRequestToken, an SDK retry of a committed transaction fails on its own claim and is reported a duplicate: found within 1 seed', async () => {
  const lostAnswers: Partial<SimulationOptions> = { faults: { ...DEFAULT_FAULTS, sdkRetryOfCommit: 0.05 } };

  const found = await firstSeedWhere(lostAnswers, { requestToken: false }, violated('miscount'), 1);

  expect(found?.seed).toBe(1);
  expect(failed(found!.guarded)).toBe(false);
  expect(found!.guarded.faults['sdk-retry-of-commit']).toBeGreaterThan(0);
});

test('without the future-stamp guard, an event stamped weeks ahead passes the horizon after its claim expired and credits the points again: found within 1 seed', async () => {
  // Producer clocks 20 to 30 days ahead on half the clients, a 60-day mail outage and redrives every
  // 13 days: each loyalty OrderPlaced is credited, dead-lettered for its owed e-mail and redriven.
  const futureStamps: Partial<SimulationOptions> = {
    ...weeksOfRedrives(),
    faults: {
      ...weeksOfRedrives().faults!,
      producerClockSkew: 0.5,
      producerClockSkewSeconds: [20 * DAY_SECONDS, 30 * DAY_SECONDS],
    },
  };
  const doubleCredit = (r: SimulationResult) =>
    r.verification.violations.some((v) => v.invariant === 'points' && v.detail.includes('more than expected'));

  const found = await firstSeedWhere(futureStamps, { futureStamps: false }, doubleCredit, 1);

  expect(found?.seed).toBe(1);
  // With the guard, each is refused (OccurredInFuture) until its stamp is within the margin, then
  // applied once: its claim lives 22 days from that stamp.
  expect(failed(found!.guarded)).toBe(false);
});

test('producer clocks up to 300 s off either way (the margin): nothing is refused and every invariant holds', async () => {
  // No outage beyond the budget and no redrive: a refused event would stay in its DLQ, a violation.
  const skewed = await simulate(
    simulationOptions({
      orders: ORDERS,
      seed: 1,
      faults: { ...DEFAULT_FAULTS, longOutageChance: 0, producerClockSkew: 0.3, producerClockSkewSeconds: [-300, 300] },
      redriveDlqsAfterSeconds: undefined,
    }),
  );

  expect(skewed.faults['producer-clock-skew']).toBeGreaterThan(0);
  expect(failed(skewed)).toBe(false);
});

test("without the done-mark's own bound, a provider 2xx that lands as the record's deadline fires is not recorded and the next copy sends again: found within 1 seed", async () => {
  // Every provider answers 24.9 to 25.05 s after the call: around the record deadline of a call made
  // at the start of an invocation (30 s timeout, deadline 5 s before it).
  const answersAtTheDeadline: Partial<SimulationOptions> = {
    faults: { ...DEFAULT_FAULTS, providerAnswerMs: [24_900, 25_050] },
  };

  const found = await firstSeedWhere(answersAtTheDeadline, { doneMarkBound: false }, violated('double-send'), 1);

  expect(found?.seed).toBe(1);
  // With the bound, no 2xx heard is sent again. (Calls that take longer than their caller's lease
  // may still overlap at a provider this slow: the residue of a lost answer, docs/guarantees.md.)
  expect(violated('double-send')(found!.guarded)).toBe(false);
  expect(found!.guarded.verification.violations.filter((v) => v.invariant !== 'provider-overlap')).toEqual([]);
});

test('an outage longer than the budget, cancels, then the operator redrive: every dead-lettered message is applied once, no PICK after CANCEL_PICK', async () => {
  const result = await simulate(
    simulationOptions({ orders: ORDERS, seed: 1, faults: longWarehouseOutage(), cancelChance: 0.8 }),
  );

  expect(result.faults['provider-outage-beyond-budget']).toBe(1);
  expect(result.faults['dlq-redrive']).toBe(1);
  expect(result.verification.violations).toEqual([]);
});

/** One warehouse outage of 25 minutes: beyond the 15-minute budget. */
function longWarehouseOutage(): FaultRates {
  return {
    ...DEFAULT_FAULTS,
    providerOutages: 1,
    longOutageChance: 1,
    longOutageSeconds: [1500, 1500],
    outageProviders: ['warehouse'],
  };
}

const DAY_SECONDS = 86_400;

/**
 * Weeks of virtual time, few orders: the mail provider goes down for 60 days while the orders arrive,
 * so every loyalty OrderPlaced credited while it lasts fails its e-mail on each try and is dead-lettered
 * after its 14 tries (effect committed, call owed); the operator redrives the DLQs every 13 days, four
 * times. The inbox claims expire after 22 days and DynamoDB's TTL deletes them up to 2 days later.
 */
function weeksOfRedrives(): Partial<SimulationOptions> {
  return {
    orders: 15,
    faults: {
      ...DEFAULT_FAULTS,
      providerOutages: 1,
      longOutageChance: 1,
      longOutageSeconds: [60 * DAY_SECONDS, 60 * DAY_SECONDS],
      outageProviders: ['mail'],
    },
    longRedrive: { redrives: 4, everyDays: 13 },
  };
}
