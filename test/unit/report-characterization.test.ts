import type { SpanRecord } from '@exactly-once/runtime/trace/spans';
import { htmlReport, summarize, terminalSummary, type RunResults } from '@exactly-once/tools/proof-kit/report';
import { slowestOrderTrace } from '@exactly-once/tools/proof-kit/trace';
import type { Verification } from '@exactly-once/tools/proof-kit/verify';

/**
 * The whole report, character for character, for one run that fills every part of it (provenance,
 * pipeline, provider rows and chart, chaos, poison, redrive, dead letters, violations, the trace): the
 * results, the terminal summary and the HTML are pinned by snapshot, so a refactor of the report's
 * modules that changes one byte of what a person reads fails here. A wording change is meant: update
 * the snapshot with `npx jest test/unit/report-characterization.test.ts -u` and review its diff.
 */

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

function orderSpans(traceId: string): SpanRecord[] {
  const id = (n: number) => `${traceId.slice(0, 15)}${n}`;
  return [
    { hop: 'api', traceId, spanId: id(1), start: T0, end: T0 + 40, attributes: { route: 'POST /things' } },
    { hop: 'outbox-write', traceId, spanId: id(2), parentId: id(1), start: T0 + 10, end: T0 + 30 },
    {
      hop: 'relay',
      traceId,
      spanId: id(3),
      parentId: id(2),
      start: T0 + 200,
      end: T0 + 220,
      attributes: { eventId: `${traceId}.happened` },
    },
    { hop: 'queue-wait', traceId, spanId: id(4), parentId: id(3), start: T0 + 215, end: T0 + 900 },
    {
      hop: 'consumer',
      traceId,
      spanId: id(5),
      parentId: id(4),
      start: T0 + 900,
      end: T0 + 960,
      attributes: { consumer: 'probe', error: 'true' },
    },
    {
      hop: 'provider-call',
      traceId,
      spanId: id(6),
      parentId: id(5),
      start: T0 + 920,
      end: T0 + 950,
      attributes: { provider: 'probe' },
    },
  ];
}

const verification: Verification = {
  violations: [
    { invariant: 'each-event-once-per-consumer', detail: 'probe-fifo: ThingUndone t1.undone has no inbox claim' },
    { invariant: 'dlq', detail: 'probe-fifo DLQ: message m-9 (TransientFailure): {"eventId":"t1.undone"}' },
  ],
  counts: { intents: 6, entities: 6, providerKeys: 9 },
  entityNoun: 'things',
  entityNounSingular: 'thing',
  effectsChecked: '6 things',
  duplicatesSuppressed: { probe: 3, 'probe-fifo': 1 },
  appliedEffects: { probe: 6, 'probe-fifo': 8 },
  consumerMetrics: {
    probe: { EffectApplied: 5, DuplicateSuppressed: 3, OwedProviderCallCompleted: 1, PermanentFailure: 2 },
    'probe-fifo': { EffectApplied: 8, DuplicateSuppressed: 1, TransientFailure: 4 },
  },
  deadLetters: [
    { queue: 'probe DLQ', cause: 'poison (SchemaViolation)', count: 3, expected: true },
    { queue: 'probe-fifo DLQ', cause: 'TransientFailure', count: 1, expected: false },
  ],
  providerLines: ['provider probe: 6 performed for 6 things, 0 duplicates (keyed); 1 answers lost'],
  providers: [
    {
      provider: 'probe',
      performed: 6,
      duplicates: 0,
      answersLost: 1,
      absorbedByKey: 2,
      at: {
        performed: [1, 2, 3, 4, 5, 6].map((n) => T0 + n * 700),
        answersLost: [T0 + 2_100],
        absorbed: [T0 + 2_500, T0 + 3_900],
      },
    },
    {
      provider: 'probe-fifo',
      performed: 8,
      duplicates: 0,
      answersLost: 0,
      absorbedByKey: 0,
      at: { performed: [1, 2, 3, 4, 5, 6, 7, 8].map((n) => T0 + n * 500), answersLost: [] },
    },
  ],
};

function fullRun(): RunResults {
  return summarize({
    runId: 'lt-char',
    target: 'local:test',
    seed: 7,
    profile: 'smoke',
    faults: ['crash', 'poison', 'redrive'],
    startedAt: '2030-01-01T00:00:00.000Z',
    plan: [0, 1, 2, 3, 4, 5, 6, 7].map((index) => ({
      index,
      op: index === 6 ? 'retry-concurrent' : index === 7 ? 'cancel' : 'new',
      caller: 'caller-1',
      method: 'POST',
      path: '/things',
      idempotencyKey: `lt-char-${index}`,
    })),
    observations: [0, 1, 2, 3, 4, 5, 6, 7].map((index) => ({
      index,
      status: index === 6 ? 409 : index === 7 ? 'no-response' : 201,
      replayed: index === 3,
      startedAt: T0 + index * 350,
      latencyMs: 20 + index * 13,
    })),
    durationMs: 3_000,
    injected: { poisonMessages: 2, redriven: 1, providerKeysForgotten: 4 },
    drain: { drained: true, waitedMs: 4_200 },
    verification,
    calls: { apiRequests: 8, lambdaInvocations: 30, dynamodbWrites: 61, dynamodbReads: 12, sqs: 44 },
    evidence: { probe: { crashes: 2, redeliveredWhileRunning: 1, eventsResent: 0, eventsStampedAhead: 0 } },
    providerChaos: {
      answersDropped: 1,
      slowAnswers: 2,
      rateLimited: 0,
      burstsStarted: 1,
      burstUnavailable: 3,
      outageUnavailable: 0,
      outageRefused: 0,
      keysForgottenEarly: 0,
    },
    pipeline: {
      intervalMs: 250,
      startedAtMs: T0,
      samples: [0, 0.25, 0.5, 1, 2, 3, 4].map((second, n) => ({
        second,
        queues: {
          Probe: { visible: 4 - Math.min(4, n), inFlight: n % 2, delayed: 0 },
          'Probe DLQ': { visible: 5 + Math.min(n, 3), inFlight: 0, delayed: 0 },
          'relay failures': { visible: 0, inFlight: 0, delayed: 0 },
        },
        counters: {
          'EffectApplied{consumer=probe}': n,
          'DuplicateSuppressed{consumer=probe}': Math.floor(n / 2),
          'OwedProviderCallCompleted{consumer=probe}': n > 4 ? 1 : 0,
          'TransientFailure{consumer=probe-fifo}': n,
          'PermanentFailure{consumer=probe}': n > 2 ? 2 : 0,
        },
      })),
      marks: [
        { second: 1, label: 'load done' },
        { second: 2.5, label: 'redrive' },
      ],
      effectLag: [
        { second: 0, consumer: 'probe', p50: 900, p99: 1_400, count: 3 },
        { second: 1, consumer: 'probe', p50: 700, p99: 65_000, count: 3 },
        { second: 0, consumer: 'probe-fifo', p50: 1_100, p99: 1_900, count: 6 },
      ],
    },
    trace: { recorded: 12, slowest: slowestOrderTrace(orderSpans('a'.repeat(32))) },
    provenance: {
      commit: 'abc1234',
      stack: 'local',
      region: 'us-east-1',
      node: 'v24.1.0',
      load: '6 intents on 2 connections, as fast as possible',
      rates: 'fault rate 0.1',
      command: 'npm run loadtest -- --profile smoke --faults crash,poison,redrive --seed 7',
    },
  });
}

test('the results of a run that fills every part of the report are as pinned', () => {
  expect(JSON.stringify(fullRun(), null, 2)).toMatchSnapshot();
});

test('the terminal summary of that run is as pinned, to the character', () => {
  expect(terminalSummary(fullRun())).toMatchSnapshot();
});

test('the HTML report of that run is as pinned, to the character', () => {
  expect(htmlReport(fullRun(), { docsHref: '../docs/proof-kit.md' })).toMatchSnapshot();
});

test('a run that did not drain and measured nothing renders as pinned', () => {
  const run: RunResults = { ...fullRun(), drain: { drained: false, waitedMs: 61_000 }, passed: false };
  delete run.provenance;
  delete run.pipeline;
  delete run.trace;

  expect(terminalSummary(run)).toMatchSnapshot();
  expect(htmlReport(run)).toMatchSnapshot();
});
