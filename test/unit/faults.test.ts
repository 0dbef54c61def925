import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ApplyOutcome, EventEnvelope } from '@exactly-once/runtime';
import { consumerFaults } from '@exactly-once/runtime/faults/consumer-faults';
import { inboxClaimDisabled } from '@exactly-once/runtime/faults/inbox-bypass';
import {
  InjectedProviderOutage,
  InjectedTransientError,
  MAX_PLAN_LIFETIME_MS,
  NO_FAULTS,
  parseFaultPlan,
} from '@exactly-once/runtime/faults/plan';
import {
  relayFaults,
  RESENT_BY_FAULT_ATTRIBUTE,
  ResendingPublisher,
  SkewingPublisher,
} from '@exactly-once/runtime/faults/relay-faults';
import { cachedSource, type FaultSource } from '@exactly-once/runtime/faults/source';
import type { EventPublisher, OutboxWiring, PublisherOptions } from '@exactly-once/runtime/outbox/ports';
import { metrics } from '@exactly-once/runtime/runtime/observability';
import { MAX_FUTURE_SKEW_SECONDS } from '@exactly-once/runtime/consumer/dedupe-horizon';
import {
  CLOCK_SKEW_WITHIN_SECONDS,
  FAULT_SWITCH_DELAY_MS,
  faultPlanLifetimeMs,
  faultPlanOf,
  providerChaosOf,
  SERVER_ERROR_BURST_REQUESTS,
  setFaultPlan,
  SLOW_ANSWER_MS,
  switchFaultsOn,
  type FaultSettings,
} from '@exactly-once/tools/proof-kit/faults';
import { parseFaultRates, parseFaults } from '@exactly-once/tools/proof-kit/run';
import { awsTarget, type Target } from '@exactly-once/tools/proof-kit/target';
import { startProviderEmulator } from '@exactly-once/tools/local-runtime/provider';
import { UNBOUNDED_WORK } from '../support/record-work';
import { MAIL_AND_WAREHOUSE } from '../support/local-provider-apis';
import { tooling as probeTooling } from '../support/probe-tooling';

const NOW = Date.parse('2030-01-01T00:00:00.000Z');
const inAMinute = new Date(NOW + 60_000).toISOString();
const ALWAYS = 1;

/** A source that always answers `plan` (as the functions read it, parsed at NOW). */
const sourceOf = (raw: object): FaultSource => ({ current: async () => parseFaultPlan(raw, 0, NOW) });

class Crashed extends Error {}
const crash = (where: string): never => {
  throw new Crashed(where);
};

const event = { eventId: 'evt-1' } as EventEnvelope;

/** The settings `npm run loadtest -- --faults all` runs with at the default --fault-rate (packages/tools/src/proof-kit/cli.ts). */
const allFaultsSettings = (): FaultSettings => ({
  enabled: parseFaults('all'),
  rate: 0.1,
  rates: parseFaultRates('all'),
  slowSeconds: 8,
  poisonPerQueue: 3,
});

describe('a fault plan expires', () => {
  test.each([
    ['without an expiry', { crashAfterEffect: ALWAYS }],
    ['past its expiry', { crashAfterEffect: ALWAYS, expiresAt: new Date(NOW - 1).toISOString() }],
    ['at its expiry', { crashAfterEffect: ALWAYS, expiresAt: new Date(NOW).toISOString() }],
    ['with an expiry that is not a time', { crashAfterEffect: ALWAYS, expiresAt: 'tomorrow' }],
    [
      'expiring more than a day ahead',
      { crashAfterEffect: ALWAYS, expiresAt: new Date(NOW + MAX_PLAN_LIFETIME_MS + 1).toISOString() },
    ],
  ])('%s it is no faults', (_, raw) => {
    expect(parseFaultPlan(raw, 0, NOW)).toBe(NO_FAULTS);
  });

  test('before its expiry it is read', () => {
    expect(parseFaultPlan({ crashAfterEffect: ALWAYS, expiresAt: inAMinute }, 0, NOW)).toMatchObject({
      crashAfterEffect: ALWAYS,
      expiresAt: inAMinute,
    });
  });

  test('a cached plan stops at its expiry, before the next read', async () => {
    let now = NOW;
    const source = cachedSource(
      async () => ({ transientError: ALWAYS, expiresAt: new Date(NOW + 1_000).toISOString() }),
      () => now,
    );

    const before = await source.current();
    now = NOW + 1_000; // inside the cache period, at the expiry
    const after = await source.current();

    expect(before.transientError).toBe(ALWAYS);
    expect(after).toBe(NO_FAULTS);
  });
});

describe('the inbox bypass (local runtime build only)', () => {
  afterEach(() => delete process.env.INBOX_BYPASS_BUILD);

  test('a plan naming a consumer does not disable its claim outside the local runtime build', () => {
    const plan = parseFaultPlan({ disableInboxClaim: ['probe'], expiresAt: inAMinute }, 0, NOW);

    expect(inboxClaimDisabled(plan, 'probe')).toBe(false);
  });

  test('in the local runtime build it disables the named consumer only', () => {
    process.env.INBOX_BYPASS_BUILD = 'true';

    const plan = parseFaultPlan({ disableInboxClaim: ['probe'], expiresAt: inAMinute }, 0, NOW);

    expect([inboxClaimDisabled(plan, 'probe'), inboxClaimDisabled(plan, 'probe-fifo')]).toEqual([true, false]);
  });
});

describe('the consumer fault decorator', () => {
  /** The decorated use case: it resolves `outcome`, after calling its provider through the faults when `callsProvider`. */
  const decorated = async (raw: object, outcome: ApplyOutcome, { callsProvider = outcome === 'applied' } = {}) => {
    const faults = consumerFaults('probe', { source: sourceOf(raw), crash, sleep: async () => undefined });
    const provider = faults.provider({ send: async () => undefined }, 'mail');
    const applied: string[] = [];
    await faults.refresh();
    const apply = faults.apply(async (e: EventEnvelope) => {
      applied.push(e.eventId);
      if (callsProvider) await provider.send(`probe:${e.eventId}`, {});
      return outcome;
    });
    return { run: () => apply(event, UNBOUNDED_WORK), applied };
  };
  const crashed = new Crashed('probe after the effect of evt-1, before the ack');

  test('crashes after the effect, before the ack, when the try applied it', async () => {
    const { run, applied } = await decorated({ crashAfterEffect: ALWAYS, expiresAt: inAMinute }, 'applied');

    await expect(run()).rejects.toThrow(crashed);
    expect(applied).toEqual(['evt-1']);
  });

  test('crashes after a duplicate that made the provider call an earlier commit still owed: it finished the work', async () => {
    const { run } = await decorated({ crashAfterEffect: ALWAYS, expiresAt: inAMinute }, 'duplicate', {
      callsProvider: true,
    });

    await expect(run()).rejects.toThrow(crashed);
  });

  test.each(['duplicate', 'stale'] as const)(
    'never crashes after a %s that did no work of its own (no provider call)',
    async (outcome) => {
      const { run } = await decorated({ crashAfterEffect: ALWAYS, expiresAt: inAMinute }, outcome);

      await expect(run()).resolves.toBe(outcome);
    },
  );

  test("a batch's records side by side: only the try that made the call crashes, not its neighbour", async () => {
    const faults = consumerFaults('probe', {
      source: sourceOf({ crashAfterEffect: ALWAYS, expiresAt: inAMinute }),
      crash,
    });
    const provider = faults.provider({ send: () => new Promise<void>((r) => setTimeout(r, 5)) }, 'mail');
    await faults.refresh();
    const apply = faults.apply(async (e: EventEnvelope) => {
      if (e.eventId === 'owed') await provider.send(`probe:${e.eventId}`, {});
      else await new Promise<void>((r) => setTimeout(r, 10)); // ends after its neighbour's call was answered
      return 'duplicate' as const;
    });

    const [owed, done] = await Promise.allSettled(
      ['owed', 'done'].map((eventId) => apply({ eventId } as EventEnvelope, UNBOUNDED_WORK)),
    );

    expect(owed).toEqual({ status: 'rejected', reason: expect.any(Crashed) });
    expect(done).toEqual({ status: 'fulfilled', value: 'duplicate' });
  });

  // The provider's faults fail most first tries after their commit, so under `all` most events are finished
  // by a later try that makes the owed call: the crash must come on those too. A smoke run of the shop
  // finishes 43 events (20 orders to two consumers, 3 cancels to one) under seed 7's plan.
  test("under --faults all's plan, tries that make an owed provider call crash at the run's rate", async () => {
    const plan = { ...faultPlanOf(allFaultsSettings(), 7, new Date(NOW)), expiresAt: inAMinute };
    const faults = consumerFaults('probe', { source: sourceOf(plan), crash, sleep: async () => undefined });
    const provider = faults.provider({ send: async () => undefined }, 'mail');
    await faults.refresh();
    const apply = faults.apply(async (e: EventEnvelope) => {
      await provider.send(`probe:${e.eventId}`, {});
      return 'duplicate' as const;
    });
    let crashes = 0;

    for (let n = 0; n < 43; n++)
      await apply(event, UNBOUNDED_WORK).catch((error: unknown) => {
        if (error instanceof Crashed) crashes += 1;
        // The plan's other faults fail a try before its effect (transient) or at its call (provider-outage).
        else if (!(error instanceof InjectedTransientError || error instanceof InjectedProviderOutage)) throw error;
      });

    expect(crashes).toBeGreaterThan(0);
  });

  test.each([
    ['a transient error', { transientError: ALWAYS }],
    ['a consumer outage', { consumerOutageUntil: '2999-01-01T00:00:00.000Z' }],
  ])('%s fails the try before the effect', async (_, raw) => {
    const { run, applied } = await decorated({ ...raw, expiresAt: inAMinute }, 'applied');

    await expect(run()).rejects.toBeInstanceOf(InjectedTransientError);
    expect(applied).toEqual([]);
  });

  test('an expired plan only forwards', async () => {
    const { run, applied } = await decorated({ crashAfterEffect: ALWAYS, transientError: ALWAYS }, 'applied');

    await expect(run()).resolves.toBe('applied');
    expect(applied).toEqual(['evt-1']);
  });

  test('counts each invocation under a plan, and none without', async () => {
    const addMetric = jest.spyOn(metrics, 'addMetric').mockImplementation(() => metrics);
    try {
      await consumerFaults('probe', { source: sourceOf({ transientError: 0.5, expiresAt: inAMinute }) }).refresh();
      await consumerFaults('probe', { source: sourceOf({ transientError: 0.5 }) }).refresh();

      expect(addMetric.mock.calls).toEqual([['FaultPlanActive', 'Count', 1]]);
    } finally {
      addMetric.mockRestore();
    }
  });
});

describe('the relay fault decorators', () => {
  const recordingPublisher = (failing: string[] = []) => {
    const published: string[][] = [];
    const publisher: EventPublisher = {
      publish: async (events) => {
        published.push(events.map((e) => e.eventId));
        return new Set(failing);
      },
    };
    return { publisher, published };
  };
  const events = ['evt-1', 'evt-2'].map((eventId) => ({ eventId }) as EventEnvelope);

  test('a resend goes out again through the resender, for published events only', async () => {
    const inner = recordingPublisher(['evt-2']);
    const resender = recordingPublisher();
    const publisher = new ResendingPublisher(inner.publisher, resender.publisher, () =>
      parseFaultPlan({ producerResend: ALWAYS, expiresAt: inAMinute }, 0, NOW),
    );

    const failed = await publisher.publish(events);

    expect(failed).toEqual(new Set(['evt-2']));
    expect(inner.published).toEqual([['evt-1', 'evt-2']]);
    expect(resender.published).toEqual([['evt-1']]);
  });

  test("the relay's resender marks its messages and gives FIFO another dedup id, so a resend is told apart from a replay", () => {
    const asked: PublisherOptions[] = [];
    const wiring = {
      publisher: recordingPublisher().publisher,
      publisherWith: (options: PublisherOptions) => {
        asked.push(options);
        return recordingPublisher().publisher;
      },
    } as unknown as OutboxWiring;

    relayFaults({ source: sourceOf({ producerResend: ALWAYS, expiresAt: inAMinute }) }).wire(wiring);

    expect(asked).toHaveLength(1);
    expect(asked[0].attributes).toEqual({ [RESENT_BY_FAULT_ATTRIBUTE]: 'true' });
    expect(asked[0].deduplicationId?.({ eventId: 'evt-1' } as EventEnvelope)).toBe('evt-1.resend');
  });

  test('without a plan nothing is resent', async () => {
    const inner = recordingPublisher();
    const resender = recordingPublisher();

    await new ResendingPublisher(inner.publisher, resender.publisher, () => NO_FAULTS).publish(events);

    expect(resender.published).toEqual([]);
  });

  test("a skewed clock moves the stamp of the events it rolls, by the plan's seconds, and nothing else", async () => {
    const sent: EventEnvelope[][] = [];
    const inner: EventPublisher = {
      publish: async (published) => {
        sent.push(published as EventEnvelope[]);
        return new Set<string>();
      },
    };
    const stamped = events.map((e) => ({ ...e, occurredAt: '2026-12-05T10:00:00.000Z' }));
    const plan = parseFaultPlan({ clockSkew: ALWAYS, clockSkewSeconds: 240, expiresAt: inAMinute }, 0, NOW);

    await new SkewingPublisher(inner, () => plan).publish(stamped);
    await new SkewingPublisher(inner, () => NO_FAULTS).publish(stamped);

    expect(sent[0]).toEqual(stamped.map((e) => ({ ...e, occurredAt: '2026-12-05T10:04:00.000Z' })));
    expect(sent[1]).toBe(stamped);
  });

  test.each([
    [240, 240],
    [-3600, -3600],
    [30 * 86_400 + 1, undefined],
    [1.5, undefined],
  ])('a plan skews clocks by whole seconds, at most 30 days either way: %s -> %s', (asked, read) => {
    expect(parseFaultPlan({ clockSkewSeconds: asked, expiresAt: inAMinute }, 0, NOW).clockSkewSeconds).toBe(read);
  });

  test("under --faults all's plan every relay invocation that dispatched something first crashes once; its retry goes through", async () => {
    const plan = { ...faultPlanOf(allFaultsSettings(), 7, new Date(NOW)), expiresAt: inAMinute };
    const faults = relayFaults({ source: sourceOf(plan), crash });
    await faults.refresh();
    const invocations = [3, 0, 1, 0, 5, 0, 2, 0]; // first dispatches: a batch, its retry, the next batch, ...

    const crashed = invocations.map((firstDispatches) => {
      try {
        faults.afterRelay(firstDispatches);
        return false;
      } catch (error) {
        if (!(error instanceof Crashed)) throw error;
        return true;
      }
    });

    expect(crashed).toEqual(invocations.map((firstDispatches) => firstDispatches > 0));
  });

  test('the relay crashes after publishing only when it dispatched something for the first time', async () => {
    const faults = relayFaults({ source: sourceOf({ relayCrashAfterPublish: ALWAYS, expiresAt: inAMinute }), crash });
    await faults.refresh();

    expect(() => faults.afterRelay(0)).not.toThrow();
    expect(() => faults.afterRelay(1)).toThrow(Crashed);
  });

  test('counts each invocation under a plan, and none without', async () => {
    const addMetric = jest.spyOn(metrics, 'addMetric').mockImplementation(() => metrics);
    try {
      await relayFaults({ source: sourceOf({ producerResend: 0.5, expiresAt: inAMinute }) }).refresh();
      await relayFaults({ source: sourceOf({ producerResend: 0.5 }) }).refresh();

      expect(addMetric.mock.calls).toEqual([['FaultPlanActive', 'Count', 1]]);
    } finally {
      addMetric.mockRestore();
    }
  });
});

describe('the proof kit and a stack without fault injection', () => {
  const settings = (enabled: FaultSettings['enabled']): FaultSettings => ({
    enabled,
    rate: 0.3,
    slowSeconds: 1,
    poisonPerQueue: 1,
  });
  const withoutSwitch = { kind: 'aws', name: 'ExactlyOnce-dev', outputs: {} } as Target;

  test('a deployed stack without the FaultParameterName output has no fault switch', async () => {
    process.env.AWS_REGION = 'eu-west-1';
    process.env.AWS_ACCESS_KEY_ID = 'AKIATEST';
    process.env.AWS_SECRET_ACCESS_KEY = 'secret';
    const cloudFormation = mockClient(CloudFormationClient);
    const sts = mockClient(STSClient);
    const stackWith = (outputs: Record<string, string>) =>
      cloudFormation.on(DescribeStacksCommand).resolves({
        Stacks: [
          {
            StackName: 'ExactlyOnce-dev',
            CreationTime: new Date(),
            StackStatus: 'CREATE_COMPLETE',
            Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
          },
        ],
      });
    sts.on(GetCallerIdentityCommand).resolves({ Arn: 'arn:aws:iam::123456789012:user/me' });
    try {
      stackWith({ ApiUrl: 'https://api.example.com/prod/' });
      const without = await awsTarget('ExactlyOnce-dev', probeTooling);
      stackWith({ ApiUrl: 'https://api.example.com/prod/', FaultParameterName: '/plan' });
      const withSwitch = await awsTarget('ExactlyOnce-dev', probeTooling);

      expect(without.faultSwitch).toBeUndefined();
      expect(withSwitch.faultSwitch).toEqual({ parameterName: '/plan' });
      without.close();
      withSwitch.close();
    } finally {
      cloudFormation.restore();
      sts.restore();
    }
  });

  test('in-function faults are refused with a one-line reason, before anything changes', async () => {
    const log = jest.fn();

    const switching = switchFaultsOn(withoutSwitch, settings(['crash', 'poison']), 1, log);

    await expect(switching).rejects.toThrow(
      /^Stack ExactlyOnce-dev has no fault switch \(no FaultParameterName output\): in-function faults need a stack deployed with -c faultInjection=true/,
    );
    await expect(switching).rejects.toThrow(/^[^\n]+$/);
    expect(log).not.toHaveBeenCalled();
  });

  test("the local provider's chaos is refused on a target without one, with a one-line reason, before anything changes", async () => {
    const log = jest.fn();

    const switching = switchFaultsOn(withoutSwitch, settings(['answer-lost', 'poison']), 1, log);

    await expect(switching).rejects.toThrow(
      /^Stack ExactlyOnce-dev has no local provider: answer-lost are served by the local provider \(npm start\)/,
    );
    await expect(switching).rejects.toThrow(/^[^\n]+$/);
    expect(log).not.toHaveBeenCalled();
  });

  test('a run without in-function faults (none, or only what the kit sends: poison, redrive, reused-id, forged-first) goes on', async () => {
    const faults = await switchFaultsOn(
      withoutSwitch,
      settings(['poison', 'redrive', 'reused-id', 'forged-first']),
      1,
      jest.fn(),
    );
    const skewed = switchFaultsOn(withoutSwitch, settings(['clock-skew']), 1, jest.fn());

    expect(faults.inFunction).toBe(false);
    await expect(skewed).rejects.toThrow(/no fault switch/);
    await expect(faults.off()).resolves.toBeUndefined();
    await expect(setFaultPlan(withoutSwitch, {})).resolves.toBeUndefined();
  });
});

describe('the proof kit sets an expiry on every plan', () => {
  const local = (): Target & { faultSwitch: { file: string } } => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'faults-'));
    return {
      kind: 'local',
      name: 'local',
      outputs: {},
      faultSwitch: { file: path.join(dir, 'faults.json') },
    } as Target & {
      faultSwitch: { file: string };
    };
  };
  const written = (target: { faultSwitch: { file: string } }) =>
    JSON.parse(fs.readFileSync(target.faultSwitch.file, 'utf8')) as Record<string, unknown>;

  test("a run's plan expires after the load, both drains and a margin", async () => {
    const target = local();
    const lifetime = faultPlanLifetimeMs({ drainTimeoutMs: 60_000 }, 400);
    jest.useFakeTimers({ now: NOW, advanceTimers: true });
    try {
      const switching = switchFaultsOn(
        target,
        { enabled: ['crash'], rate: 0.3, slowSeconds: 1, poisonPerQueue: 0 },
        1,
        jest.fn(),
        lifetime,
      );
      await jest.advanceTimersByTimeAsync(10_000);
      await switching;
    } finally {
      jest.useRealTimers();
    }

    expect(lifetime).toBe(20_000 + 120_000 + 300_000);
    expect(written(target).expiresAt).toBe(new Date(NOW + lifetime).toISOString());
  });

  test('a plan set without one gets the default; no faults stays empty', async () => {
    const target = local();

    await setFaultPlan(target, { crashAfterEffect: 0.5 });
    const withFaults = written(target);
    await setFaultPlan(target, {});

    expect(Date.parse(withFaults.expiresAt as string) - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(written(target)).toEqual({});
  });
});

describe("a run's fault plan is timed from one clock", () => {
  test('the consumer outage ends its seconds after the switch delay, from the instant the plan is made at', () => {
    const settings: FaultSettings = {
      enabled: ['provider-outage'],
      rate: 1,
      slowSeconds: 0,
      poisonPerQueue: 0,
      consumerOutageSeconds: 90,
    };

    const plan = faultPlanOf(settings, 7, new Date(NOW));

    expect(plan.consumerOutageUntil).toBe(new Date(NOW + FAULT_SWITCH_DELAY_MS + 90_000).toISOString());
    expect(Date.parse(plan.providerOutageWindow!.from)).toBeGreaterThanOrEqual(NOW + FAULT_SWITCH_DELAY_MS);
  });
});

describe("a run's fault rates", () => {
  test('a per-fault rate overrides the run rate for that fault only; a fault not enabled gets none', () => {
    const settings: FaultSettings = {
      enabled: ['relay-crash', 'resend'],
      rate: 0.3,
      rates: { 'relay-crash': 1, crash: 1 },
      slowSeconds: 0,
      poisonPerQueue: 0,
    };

    const plan = faultPlanOf(settings, 7, new Date(NOW));

    expect(plan.relayCrashAfterPublish).toBe(1);
    expect(plan.producerResend).toBe(0.3);
    expect(plan.crashAfterEffect).toBeUndefined();
  });

  test('--faults all runs the relay crash at 1 and every other fault at --fault-rate; a named list runs all at --fault-rate', () => {
    const all = faultPlanOf(allFaultsSettings(), 7, new Date(NOW));
    const named = faultPlanOf(
      { ...allFaultsSettings(), rates: parseFaultRates('crash,relay-crash') },
      7,
      new Date(NOW),
    );

    expect(all).toMatchObject({ relayCrashAfterPublish: 1, crashAfterEffect: 0.1, transientError: 0.1 });
    expect(named).toMatchObject({ relayCrashAfterPublish: 0.1, crashAfterEffect: 0.1 });
    expect(parseFaultRates('none')).toBeUndefined();
  });

  test("clock-skew stamps inside the consumers' margin, clock-skew-beyond a day ahead (it wins when both are on)", () => {
    const planFor = (enabled: FaultSettings['enabled']) =>
      faultPlanOf({ enabled, rate: 0.3, slowSeconds: 0, poisonPerQueue: 0 }, 7, new Date(NOW));

    expect(planFor(['clock-skew'])).toMatchObject({ clockSkew: 0.3, clockSkewSeconds: CLOCK_SKEW_WITHIN_SECONDS });
    expect(planFor(['clock-skew-beyond'])).toMatchObject({ clockSkew: 0.3, clockSkewSeconds: 86_400 });
    expect(planFor(['clock-skew', 'clock-skew-beyond']).clockSkewSeconds).toBe(86_400);
    expect(planFor(['resend']).clockSkew).toBeUndefined();
    expect(CLOCK_SKEW_WITHIN_SECONDS).toBeLessThan(MAX_FUTURE_SKEW_SECONDS);
  });
});

describe("the local provider's chaos comes from the run's fault settings", () => {
  const settings = (enabled: FaultSettings['enabled']): FaultSettings => ({
    enabled,
    rate: 0.3,
    rates: { 'rate-limited': 0.1 },
    slowSeconds: 0,
    poisonPerQueue: 0,
  });

  test('each fault on the wire at its rate, seeded; none of them: no chaos', () => {
    const chaos = providerChaosOf(
      settings(['answer-lost', 'slow-answer', 'rate-limited', 'server-errors', 'crash']),
      7,
    );

    expect(chaos).toEqual({
      seed: 7,
      dropAnswer: { count: 1, probability: 0.3 },
      slowAnswer: { count: 1, probability: 0.3, delayMs: SLOW_ANSWER_MS },
      rateLimit: { count: 1, probability: 0.1, retryAfterSeconds: 1 },
      serverErrorBurst: {
        requests: SERVER_ERROR_BURST_REQUESTS,
        probability: 0.3 / SERVER_ERROR_BURST_REQUESTS,
        retryAfterSeconds: 1,
      },
    });
    // Past the HTTP provider's own cap on one call (10 s): the caller gives up while the key still runs.
    expect(SLOW_ANSWER_MS).toBeGreaterThan(10_000);
    expect(providerChaosOf(settings(['crash', 'keys-forgotten']), 7)).toEqual({});
  });

  test("with a local provider the outage is served on the wire from the run's first call, the functions' plan keeps only the per-call share", () => {
    const outage = { ...settings(['provider-outage']), providerOutageSeconds: 7 };

    const chaos = providerChaosOf(outage, 7);
    const inFunction = faultPlanOf(outage, 7, new Date(NOW), { outageAtTheProvider: true });
    const withoutProvider = faultPlanOf(outage, 7, new Date(NOW));

    expect(chaos.outage).toEqual({ forMs: 7_000, mode: 'unavailable' });
    expect(inFunction.providerOutageWindow).toBeUndefined();
    expect(inFunction.providerOutage).toBe(0.3);
    // A deployed stack has no local provider: its functions keep the window, on the clock.
    expect(withoutProvider.providerOutageWindow).toBeDefined();
  });

  test('switching the faults on sets the chaos at the local provider, with its API key; off() clears it', async () => {
    const provider = await startProviderEmulator({
      apiKey: 'chaos-key',
      apis: MAIL_AND_WAREHOUSE,
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaos-'));
    const keyFile = path.join(dir, 'key');
    fs.writeFileSync(keyFile, 'chaos-key');
    const target = {
      kind: 'local',
      name: 'local',
      outputs: { LocalProviderUrl: provider.url, LocalProviderApiKeyFile: keyFile },
    } as unknown as Target;
    try {
      const faults = await switchFaultsOn(target, settings(['answer-lost']), 3, jest.fn());
      const during = provider.log().chaos;
      await faults.off();

      expect(faults.inFunction).toBe(false);
      expect(during).toEqual({ seed: 3, dropAnswer: { count: 1, probability: 0.3 } });
      expect(provider.log().chaos).toEqual({});
    } finally {
      await provider.stop();
    }
  });
});
