import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LocalRuntime } from '../../tools/local-runtime/runtime';
import { CONSUMERS } from '../../lambdas/consumers';
import { ALL_FAULTS, type FaultName, type FaultSettings } from '../../tools/proof-kit/faults';
import { localCallCounters } from '../../tools/proof-kit/local-counters';
import { htmlReport, writeReports, type RunResults } from '../../tools/proof-kit/report';
import { runLoadTest, type Profile } from '../../tools/proof-kit/run';
import { localTarget, type Target } from '../../tools/proof-kit/target';
import { EACH_EVENT_ONCE } from '../../tools/proof-kit/verify';
import { capturingLogger, startSynthesizedStack } from './fixtures';

/**
 * The proof kit's fault matrix on the local runtime, at small scale: the faults in
 * two groups (each fault's own evidence asserted), then all together, every run
 * verified against the invariants of docs/proof-kit.md. Then proof that the kit can
 * fail: with the consumers' inbox claims switched off (a test-only switch), the
 * verification must report the doubles. Long outages are in outages.test.ts.
 */
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'proof-kit-'));
let runtime: LocalRuntime;
let target: Target;
const runtimeLog = capturingLogger();

const SMALL: Profile = { orders: 20, connections: 4, customers: 4, skus: 4, drainTimeoutMs: 300_000 };

beforeAll(async () => {
  runtime = await startSynthesizedStack({
    work,
    log: runtimeLog.log,
    outputsFile: path.join(work, 'outputs.json'),
    faultInjectionFile: path.join(work, 'faults.json'),
  });
  target = localTarget({ outputsFile: path.join(work, 'outputs.json'), faultsFile: path.join(work, 'faults.json') });
}, 240_000);

afterAll(async () => {
  target?.close();
  await runtime?.stop();
});

function run(
  faults: FaultName[],
  seed: number,
  options: { disableInboxClaim?: string[]; rate?: number; rates?: FaultSettings['rates'] } = {},
): Promise<RunResults> {
  const { disableInboxClaim, rate = 0.3, rates } = options;
  return runLoadTest({
    target,
    profileName: 'test',
    profile: SMALL,
    seed,
    faults: {
      enabled: faults,
      rate,
      rates,
      slowSeconds: 4,
      poisonPerQueue: 2,
      disableInboxClaim,
      localVisibilitySeconds: 3,
    },
    callCounters: localCallCounters(target),
  });
}

const totalSuppressed = (r: RunResults) =>
  Object.values(r.verification.duplicatesSuppressed).reduce((a, b) => a + b, 0);

/** Every planned order gets its 201 unless the machine drops a connection: a run far below this proves little. */
const MIN_ORDERS_PER_RUN = Math.ceil(SMALL.orders * 0.9);

/** A fault evidence counter summed over the functions whose display name contains `functions`, over one run. */
function evidence(
  results: RunResults,
  functions: 'Consumer' | 'Relay',
  counter: keyof NonNullable<RunResults['evidence']>[string],
): number {
  expect(results.evidence).toBeDefined();
  return Object.entries(results.evidence ?? {})
    .filter(([name]) => name.includes(functions))
    .reduce((n, [, counts]) => n + counts[counter], 0);
}

const transientFailures = (r: RunResults) =>
  Object.values(r.verification.consumerMetrics).reduce((n, m) => n + (m.TransientFailure ?? 0), 0);

/** The DLQ copies the redrive fault seeds (tools/proof-kit/run.ts): at least two, one per ten orders. */
const SEEDED_DEAD_LETTERS = Math.max(2, Math.ceil(SMALL.orders / 10));

/**
 * What each fault leaves behind, as the host, the queues or the metrics saw it in that run. A fault
 * shares a run only with faults that cannot leave the same mark (the groups below), so each mark is
 * proof that its own fault fired. A Record, so a new fault does not compile without its evidence.
 */
const FAULT_EVIDENCE: Record<FaultName, (r: RunResults) => void> = {
  // The consumer process died after its effect, before the ack: the host counted the crash.
  crash: (r) => expect(evidence(r, 'Consumer', 'crashes')).toBeGreaterThan(0),
  // A message came back (visibility expired) while its first delivery was still running.
  slow: (r) => expect(evidence(r, 'Consumer', 'redeliveredWhileRunning')).toBeGreaterThan(0),
  // Tries failed and were reported failed (nothing else in its group fails a try without crashing).
  transient: (r) => expect(transientFailures(r)).toBeGreaterThan(0),
  poison: (r) =>
    expect(r.verification.deadLetters).toEqual(
      expect.arrayContaining([expect.objectContaining({ cause: 'poison (SchemaViolation)', count: 2 })]),
    ),
  'relay-crash': (r) => expect(evidence(r, 'Relay', 'crashes')).toBeGreaterThan(0),
  // An event reached a consumer under a second message id more often than the redrive (which also makes
  // new ids, one per message it moves) can account for: the producer sent it again.
  resend: (r) => expect(evidence(r, 'Consumer', 'eventsUnderSeveralMessageIds')).toBeGreaterThan(r.injected.redriven),
  // The seeded copies came back from the DLQs to their sources.
  redrive: (r) => expect(r.injected.redriven).toBeGreaterThanOrEqual(SEEDED_DEAD_LETTERS),
  // Provider calls in the outage window failed their tries (no other fault of its group fails a try).
  'provider-outage': (r) => expect(transientFailures(r)).toBeGreaterThan(0),
};

/**
 * The fault matrix as two runs instead of one per fault: the faults inside the consumers, and the
 * faults around them (producer, relay, providers, operator), each fault's evidence asserted apart.
 * All of them together follow, where chains of failures on one message are the point.
 */
const FAULT_GROUPS: readonly { faults: FaultName[]; rate: number; rates?: FaultSettings['rates']; seed: number }[] = [
  // Three ways a try goes wrong: at 0.2 each a message still gets through in a few tries.
  { faults: ['crash', 'slow', 'transient'], rate: 0.2, seed: 100 },
  // The relay crashes at most once per batch it dispatches first: at rate 1 every batch crashes once,
  // then goes through. The others at 0.3, as each would run alone.
  {
    faults: ['relay-crash', 'resend', 'poison', 'redrive', 'provider-outage'],
    rate: 0.3,
    rates: { 'relay-crash': 1 },
    seed: 101,
  },
];

test('the fault groups cover every fault, each once', () => {
  const grouped = FAULT_GROUPS.flatMap((g) => g.faults);

  expect([...grouped].sort()).toEqual([...ALL_FAULTS].sort());
});

describe.each(FAULT_GROUPS.map((g) => [g.faults.join(', '), g]))('faults %s in one run', (_names, group) => {
  test('effects equal intents, and each fault left its own mark', async () => {
    const results = await run(group.faults, group.seed, { rate: group.rate, rates: group.rates });

    expect(results.verification.violations).toEqual([]);
    expect(results.passed).toBe(true);
    expect(results.verification.counts.orders).toBe(results.verification.counts.intents);
    expect(results.verification.counts.orders).toBeGreaterThanOrEqual(MIN_ORDERS_PER_RUN);
    // Each fault must actually have happened, or the run proves nothing about it.
    for (const fault of group.faults) FAULT_EVIDENCE[fault](results);
    expect(totalSuppressed(results)).toBeGreaterThan(0);
  }, 900_000);
});

test('all faults together: effects equal intents, calls per order measured, report renders', async () => {
  // Every fault at once, each at 10 %: chains of failures on one message (provider outage, transient,
  // crash, slow) still happen, and each failure doubles the message's backoff: at higher rates one
  // unlucky message waits minutes, and the drain with it.
  const results = await run([...ALL_FAULTS], 200, { rate: 0.1 });
  const files = writeReports(results, path.join(work, 'reports'));
  const html = fs.readFileSync(files.html, 'utf8');

  expect(results.verification.violations).toEqual([]);
  // Not `passed`: with every fault at once a few messages can still be backing off when the drain bound
  // ends on a loaded 2-core machine; the invariants above are checked all the same.
  expect(results.verification.counts.orders).toBeGreaterThanOrEqual(MIN_ORDERS_PER_RUN);
  expect(totalSuppressed(results)).toBeGreaterThan(0);
  expect(results.perOrder.dynamodbWrites).toBeGreaterThan(0);
  expect(results.perOrder.sqsRequests).toBeGreaterThan(0);
  expect(results.costPerMillionOrders).toBeGreaterThan(0);
  // Four charts of the HTTP side, one of the effects applied (stored and as metrics), six of the pipeline
  // over time (queues, effects, faults, lag).
  expect(html.match(/<svg /g)).toHaveLength(11);
  expect(html).toContain(results.passed ? 'PASS, effects == intents' : 'FAIL, 0 violation(s)');
  allFaultsVerdict = results.passed ? 'PASS, effects == intents' : 'FAIL, 0 violation(s)';
  const embedded = /<script type="application\/json" id="results">([\s\S]*?)<\/script>/.exec(html)![1];
  expect(JSON.parse(embedded).runId).toBe(results.runId);
  allFaultsReport = files.html;
}, 1_200_000);

// The HTML report as a browser renders it: real where Chromium is installed, visibly skipped elsewhere.
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
if (CHROMIUM === undefined)
  console.warn('proof-kit: SKIPPED the HTML render check: no Chromium at /usr/bin (apt-get install chromium)');
let allFaultsReport: string | undefined;
let allFaultsVerdict: string | undefined;

(CHROMIUM === undefined ? test.skip : test)(
  'the all-faults report, rendered by headless Chromium, shows the PASS verdict',
  () => {
    expect(allFaultsReport).toBeDefined(); // written by the all-faults test above

    expect(renderedVerdict(CHROMIUM!, allFaultsReport!)).toBe(allFaultsVerdict);
  },
  120_000,
);

// The kit can fail: every consumer broken in one run, and each violation says which way the effect is off.
describe('the kit can fail: with every inbox claim disabled, resent events are applied again and reported', () => {
  let results: RunResults;
  beforeAll(async () => {
    results = await run(['resend'], 300, { disableInboxClaim: CONSUMERS.map((c) => c.name) });
  }, 900_000);

  test('the run fails, and its report says so', () => {
    expect(results.passed).toBe(false);
    expect(htmlReport(results)).toContain('FAIL');
  });

  test.each([
    ['loyalty', 'double points', 'points', /^customer .*: points \d+, more than expected \d+$/],
    ['fulfilment', 'double reservations', 'reserved', /^sku .*: reserved \d+, more than expected \d+$/],
  ] as const)(
    '%s: duplicates become %s, reported as "more than expected"',
    (_consumer, _doubles, invariant, detail) => {
      const doubles = results.verification.violations.filter((v) => v.invariant === invariant);

      expect(doubles.length).toBeGreaterThan(0);
      for (const violation of doubles) expect(violation.detail).toMatch(detail);
    },
  );

  // Every consumer on the list (one made by `npm run new:consumer` too) is caught by the generic invariant,
  // each event once per consumer, whether or not an effect-specific invariant covers it.
  test.each(CONSUMERS.map((c) => [c.name]))('%s: the generic invariant reports its events as unclaimed', (name) => {
    expect(unclaimedBy(results, name)).toBeGreaterThan(0);
  });
});

/** How many of the consumer's events the generic invariant found without an inbox claim. */
function unclaimedBy(results: RunResults, consumer: string): number {
  return results.verification.violations.filter(
    (v) =>
      v.invariant === EACH_EVENT_ONCE && v.detail.startsWith(`${consumer}: `) && v.detail.includes('no inbox claim'),
  ).length;
}

/** The verdict in the DOM headless Chromium builds from the report file. */
function renderedVerdict(chromium: string, file: string): string | undefined {
  const result = spawnSync(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--no-first-run',
      `--user-data-dir=${path.join(work, 'chrome')}`,
      '--dump-dom',
      `file://${file}`,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return /<span id="verdict"[^>]*>([^<]*)</.exec(result.stdout)?.[1];
}
