import { failed } from '@exactly-once/tools/simulation/campaign';
import {
  DEFAULT_FAULTS,
  MECHANISM_GUARDS,
  type FaultRates,
  type MechanismGuards,
  type SimulationResult,
} from '@exactly-once/tools/simulation/world/world';
import { PROBE_SIMULATED_CONSUMERS } from '../exactly-once/fixtures/probe-simulation';
import { probeSimulationOptions, simulateProbe, type ProbeSimulationOptions } from './probe-world';

/**
 * Each of the mechanism's guards switched off (test-only, in the simulation's wiring; production code
 * is unchanged) must be caught within a bounded number of seeds: the simulation is only worth its
 * green runs if it turns red when a guard is missing. The world is the neutral probe domain (two
 * consumers of the generic entity effect, one standard, one FIFO), so these run with the example
 * deleted. Each test runs schedules 1, 2, ... until one violates the invariant the guard protects, and
 * checks that the same schedule with every guard on holds every invariant.
 */
const ORDERS = 100;

async function firstSeedWhere(
  options: Partial<ProbeSimulationOptions>,
  guards: Partial<MechanismGuards>,
  violates: (r: SimulationResult) => boolean,
  maxSeeds: number,
) {
  for (let seed = 1; seed <= maxSeeds; seed++) {
    const broken = await simulateProbe(
      probeSimulationOptions({ intents: ORDERS, ...options, guards: { ...MECHANISM_GUARDS, ...guards }, seed }),
    );
    if (violates(broken)) {
      const guarded = await simulateProbe(probeSimulationOptions({ intents: ORDERS, ...options, seed }));
      return { seed, guarded };
    }
  }
  return undefined;
}

const violated = (invariant: string) => (r: SimulationResult) =>
  r.verification.violations.some((v) => v.invariant === invariant);

/** The probe consumers' names as a pattern over invocation names (`<consumer>#<n>`). */
const ANY_CONSUMER = `(?:${PROBE_SIMULATED_CONSUMERS.map((c) => c.name).join('|')})`;

test('without the inbox claim, a redelivered event is applied twice: found within 3 seeds', async () => {
  const appliedTwice = (r: SimulationResult) =>
    r.verification.violations.some((v) => v.invariant === 'applied' && v.detail.includes('more than expected'));

  const found = await firstSeedWhere({}, { inboxClaim: false }, appliedTwice, 3);

  expect(found?.seed).toBeLessThanOrEqual(3);
  expect(failed(found!.guarded)).toBe(false);
});

test('with the inbox claim keyed on the SQS messageId, a resent or republished event is taken without a claim under its eventId: found within 5 seeds', async () => {
  const found = await firstSeedWhere({}, { dedupeOn: 'messageId' }, violated('each-event-once-per-consumer'), 5);

  expect(found?.seed).toBeLessThanOrEqual(5);
  expect(failed(found!.guarded)).toBe(false);
});

test('with the old retry budget (5 receives, full jitter from 2 s), a two-minute provider outage dead-letters live messages: found within 2 seeds', async () => {
  // Longer than the old budget (about 30 s), far inside the deployed 15 minutes. No operator redrive.
  const outage: Partial<ProbeSimulationOptions> = {
    faults: { ...DEFAULT_FAULTS, providerOutages: 1, providerOutageSeconds: [120, 120], longOutageChance: 0 },
    redriveDlqsAfterSeconds: undefined,
  };

  const found = await firstSeedWhere(outage, { retryBudget: 'seconds' }, violated('dlq'), 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
});

test('with a duplicate calling the provider whatever happened since, copies of an event call the provider under one key at once: found within 2 seeds', async () => {
  const found = await firstSeedWhere({}, { providerCompletion: false }, violated('provider-overlap'), 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
  expect(found!.guarded.providerOverlaps).toEqual([]);
});

test('with keys scoped to the session, a retry from rotated credentials creates a second entity: found within 2 seeds', async () => {
  const rotation = { faults: { ...DEFAULT_FAULTS, credentialRotation: 0.5 } };

  const found = await firstSeedWhere(rotation, { callerScope: 'session' }, violated('orders'), 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
});

test('without the record deadline, a hung call holds its batch until Lambda stops the consumer, and none of the batch is acked: found within 2 seeds', async () => {
  // A consumer stopped by its timeout breaks no invariant (its messages come back after their visibility
  // timeout), so the trace tells: Lambda stopped a consumer. Calls hang ten times as often as by default
  // (as in timeouts.test.ts), so each schedule has a few.
  const hangs: Partial<ProbeSimulationOptions> = {
    faults: { ...DEFAULT_FAULTS, timeoutPerCall: 0.01 },
    keepTrace: Number.MAX_SAFE_INTEGER,
  };
  const stoppedConsumers = (r: SimulationResult) =>
    r.trace.flatMap((line) => new RegExp(`FAULT timeout: (${ANY_CONSUMER}#\\d+) stopped`).exec(line)?.[1] ?? []);
  const consumerStopped = (r: SimulationResult) =>
    stoppedConsumers(r).some((name) => r.trace.some((line) => line.endsWith(`${name} acked nothing (timed out)`)));

  const found = await firstSeedWhere(hangs, { recordDeadline: false }, consumerStopped, 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
  expect(stoppedConsumers(found!.guarded)).toEqual([]);
  expect(found!.guarded.consequences['record-deadline']).toBeGreaterThan(0);
});

test('without the dedupe horizon, a redrive weeks later, after DynamoDB TTL deleted the inbox claim, takes the event again: found within 2 seeds', async () => {
  const found = await firstSeedWhere(weeksOfRedrives(), { dedupeHorizon: false }, violated('horizon'), 2);

  expect(found?.seed).toBeLessThanOrEqual(2);
  expect(failed(found!.guarded)).toBe(false);
  // With the horizon, the events still circulating are refused once too old: they sit in the standard
  // consumer's DLQ with their cause (applied once, their provider call for a person to make).
  expect(found!.guarded.verification.deadLetters).toContainEqual(
    expect.objectContaining({ queue: 'probe DLQ', cause: expect.stringMatching(/^DedupeHorizonPassed/) }),
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
  const forging: Partial<ProbeSimulationOptions> = { faults: { ...DEFAULT_FAULTS, forgedFirst: 0.1 } };

  const found = await firstSeedWhere(forging, { queueSenders: false }, violated('event-id-reused'), 1);

  expect(found?.seed).toBe(1);
  expect(failed(found!.guarded)).toBe(false);
  expect(found!.guarded.faults['forged-send-denied']).toBeGreaterThan(0);
});

test('without the fingerprint in the claim, a forged copy and the real event under one id: one is taken for a duplicate of the other and lost unseen: found within 1 seed', async () => {
  const forging: Partial<ProbeSimulationOptions> = { faults: { ...DEFAULT_FAULTS, forgedFirst: 0.1 } };
  const pastThePolicy = { ...MECHANISM_GUARDS, queueSenders: false };

  const lost = await simulateProbe(
    probeSimulationOptions({ intents: ORDERS, ...forging, guards: { ...pastThePolicy, fingerprint: false }, seed: 1 }),
  );
  const caught = await simulateProbe(
    probeSimulationOptions({ intents: ORDERS, ...forging, guards: pastThePolicy, seed: 1 }),
  );

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

test('without the ClientRequestToken and the own-holder rule, an SDK retry of a committed transaction fails on its own claim and is reported a duplicate: found within 1 seed', async () => {
  const lostAnswers: Partial<ProbeSimulationOptions> = { faults: { ...DEFAULT_FAULTS, sdkRetryOfCommit: 0.05 } };

  const found = await firstSeedWhere(lostAnswers, { requestToken: false, ownCommit: false }, violated('miscount'), 1);

  expect(found?.seed).toBe(1);
  expect(failed(found!.guarded)).toBe(false);
  expect(found!.guarded.faults['sdk-retry-of-commit']).toBeGreaterThan(0);
});

test("without the ClientRequestToken alone, the own-holder rule reads the refused claim as the try's own commit: applied, every invariant holds", async () => {
  const lostAnswers = probeSimulationOptions({
    intents: ORDERS,
    faults: { ...DEFAULT_FAULTS, sdkRetryOfCommit: 0.05 },
    guards: { ...MECHANISM_GUARDS, requestToken: false },
    seed: 1,
  });

  const result = await simulateProbe(lostAnswers);

  expect(result.faults['sdk-retry-of-commit']).toBeGreaterThan(0);
  expect(result.verification.violations).toEqual([]);
  expect(failed(result)).toBe(false);
});

test('without the future-stamp guard, an event stamped weeks ahead passes the horizon after its claim expired and is taken again: found within 1 seed', async () => {
  // Producer clocks 20 to 30 days ahead on half the clients, a 60-day outage of the standard consumer's
  // provider and redrives every 13 days: each ThingHappened is counted, dead-lettered for its owed
  // call and redriven.
  const futureStamps: Partial<ProbeSimulationOptions> = {
    ...weeksOfRedrives(),
    faults: {
      ...weeksOfRedrives().faults!,
      producerClockSkew: 0.5,
      producerClockSkewSeconds: [20 * DAY_SECONDS, 30 * DAY_SECONDS],
    },
  };

  const found = await firstSeedWhere(futureStamps, { futureStamps: false }, violated('horizon'), 1);

  expect(found?.seed).toBe(1);
  // With the guard, each is refused (OccurredInFuture) until its stamp is within the margin, then
  // applied once: its claim lives 22 days from that stamp.
  expect(failed(found!.guarded)).toBe(false);
}, 180_000);

test('producer clocks up to 300 s off either way (the margin): nothing is refused and every invariant holds', async () => {
  // No outage beyond the budget and no redrive: a refused event would stay in its DLQ, a violation.
  const skewed = await simulateProbe(
    probeSimulationOptions({
      intents: ORDERS,
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
  const answersAtTheDeadline: Partial<ProbeSimulationOptions> = {
    faults: { ...DEFAULT_FAULTS, providerAnswerMs: [24_900, 25_050] },
  };

  const found = await firstSeedWhere(answersAtTheDeadline, { doneMarkBound: false }, violated('double-send'), 1);

  expect(found?.seed).toBe(1);
  // With the bound, no 2xx heard is sent again. (Calls that take longer than their caller's lease
  // may still overlap at a provider this slow: the residue of a lost answer, docs/guarantees.md.)
  expect(violated('double-send')(found!.guarded)).toBe(false);
  expect(found!.guarded.verification.violations.filter((v) => v.invariant !== 'provider-overlap')).toEqual([]);
});

test('an outage longer than the budget, undos, then the operator redrive: every dead-lettered message is applied once and every invariant holds', async () => {
  const result = await simulateProbe(
    probeSimulationOptions({ intents: ORDERS, seed: 1, faults: longOutageOf('probe-fifo'), cancelChance: 0.8 }),
  );

  expect(result.faults['provider-outage-beyond-budget']).toBe(1);
  expect(result.faults['dlq-redrive']).toBe(1);
  expect(result.verification.violations).toEqual([]);
});

/** One outage of a provider for 25 minutes: beyond the 15-minute budget. */
function longOutageOf(provider: string): FaultRates {
  return {
    ...DEFAULT_FAULTS,
    providerOutages: 1,
    longOutageChance: 1,
    longOutageSeconds: [1500, 1500],
    outageProviders: [provider],
  };
}

const DAY_SECONDS = 86_400;

/**
 * Weeks of virtual time, few things: the standard consumer's provider goes down for 60 days while the
 * things arrive, so every ThingHappened it counts meanwhile fails its call on each try and is
 * dead-lettered after its 14 tries (effect committed, call owed); the operator redrives the DLQs every
 * 13 days, four times. The inbox claims expire after 22 days and DynamoDB's TTL deletes them up to 2 days later.
 */
function weeksOfRedrives(): Partial<ProbeSimulationOptions> {
  return {
    intents: 15,
    faults: {
      ...DEFAULT_FAULTS,
      providerOutages: 1,
      longOutageChance: 1,
      longOutageSeconds: [60 * DAY_SECONDS, 60 * DAY_SECONDS],
      outageProviders: ['probe'],
    },
    longRedrive: { redrives: 4, everyDays: 13 },
  };
}
