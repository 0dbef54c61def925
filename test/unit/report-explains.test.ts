import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PerformedEffect, ProviderLog } from '@exactly-once/tools/local-runtime/provider';
import { PENDING_SHARDS } from '@exactly-once/runtime/aws/outbox-table';
import { drainProgressLine, waitForDrain } from '@exactly-once/tools/proof-kit/drain';
import { gitCommit, reproduceCommand, type Provenance } from '@exactly-once/tools/proof-kit/provenance';
import { providerFigures, providerLines, summarizeProviders } from '@exactly-once/tools/proof-kit/provider-calls';
import {
  htmlReport,
  summarize,
  terminalSummary,
  timelineBucketSeconds,
  verdictOf,
  writeReports,
  type RunResults,
} from '@exactly-once/tools/proof-kit/report';
import { markFaultsOff } from '@exactly-once/tools/proof-kit/run';
import type { PipelineSamples } from '@exactly-once/tools/proof-kit/sampler';
import type { FaultSettings } from '@exactly-once/tools/proof-kit/faults';
import type { Target } from '@exactly-once/tools/proof-kit/target';
import { waterfallChart, type OrderTrace } from '@exactly-once/tools/proof-kit/trace';
import { consumerOutputNames } from '@exactly-once/runtime/consumer-spec';
import { exampleDomain } from '../support/example-domain';
import { emptyVerification, smokeRunResults } from '../support/run-results';

/**
 * The proof report explains itself and can be trusted: what each chart shows, a glossary, the docs,
 * markers only for what happened, provider figures that are one number in the chart and the text,
 * this run's counts only, short runs drawn as points, one colour per consumer, readable trace ticks,
 * the provenance, "not drained" as its own verdict, the statuses, and a line while the drain waits.
 */

const NO_FAULTS: FaultSettings = { enabled: [], rate: 0.1, slowSeconds: 8, poisonPerQueue: 3 };
const T0 = Date.parse('2030-01-01T00:00:00.000Z');

const run = (changes: Partial<RunResults> = {}): RunResults => ({
  ...smokeRunResults(emptyVerification()),
  ...changes,
});

/** The value each line of a chart ends on, by series name. */
function lastValues(html: string): Record<string, number> {
  return Object.fromEntries(
    [...html.matchAll(/data-series="([^"]+)" data-last-y="([\d.]+)"/g)].map((m) => [m[1], Number(m[2])]),
  );
}

describe('the report explains itself', () => {
  it('says under each chart what it shows, has a glossary of its terms and links to the docs', () => {
    const samples: PipelineSamples = {
      intervalMs: 1_000,
      samples: [{ second: 0, queues: { Fulfilment: { visible: 1, inFlight: 0, delayed: 0 } } }],
      marks: [],
      effectLag: [],
    };

    const html = htmlReport(run({ pipeline: samples }), { docsHref: '../docs/proof-kit.md' });

    const figures = html.match(/<figure>[\s\S]*?<\/figure>/g)!;
    expect(figures.length).toBeGreaterThanOrEqual(11);
    for (const figure of figures) expect(figure).toMatch(/<p class="explain">[^<]{40,}<\/p><\/figure>$/);
    for (const term of [
      'intent',
      'effect',
      'duplicate delivered',
      'duplicate suppressed',
      'stale (event ignored)',
      'DLQ cause',
      'keys forgotten',
      'answers lost',
      'absorbed by the key',
      'drained / not drained',
    ])
      expect(html).toContain(`<dt>${term.replace(/'/g, '&#39;')}</dt><dd>`);
    expect(html).toContain('<a href="../docs/proof-kit.md">docs/proof-kit.md</a>');
    expect(html).toContain('in the repository this report came from');
  });

  it('links to docs/proof-kit.md relative to where the report is written, so the link opens the file', () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'report-'));

    const { html } = writeReports(run(), path.join(directory, 'nested'));

    const href = /<a href="([^"]+)">docs\/proof-kit\.md<\/a>/.exec(fs.readFileSync(html, 'utf8'))![1];
    expect(fs.existsSync(path.resolve(path.dirname(html), href))).toBe(true);
    expect(path.resolve(path.dirname(html), href)).toBe(path.resolve(__dirname, '../../docs/proof-kit.md'));
  });
});

describe('markers only for what happened', () => {
  it('a run with no faults marks no "faults off"; a run with faults does', () => {
    const quiet: string[] = [];
    const faulty: string[] = [];
    const bypass: string[] = [];

    markFaultsOff({ mark: (label) => quiet.push(label) }, NO_FAULTS);
    markFaultsOff({ mark: (label) => faulty.push(label) }, { ...NO_FAULTS, enabled: ['crash'] });
    markFaultsOff({ mark: (label) => bypass.push(label) }, { ...NO_FAULTS, disableInboxClaim: ['loyalty'] });

    expect(quiet).toEqual([]);
    expect(faulty).toEqual(['faults off']);
    expect(bypass).toEqual(['faults off']);
  });

  it('draws no marker line when the run marked nothing', () => {
    const samples: PipelineSamples = {
      intervalMs: 1_000,
      samples: [{ second: 0, queues: { Fulfilment: { visible: 1, inFlight: 0, delayed: 0 } } }],
      marks: [],
      effectLag: [],
    };

    const html = htmlReport(run({ pipeline: samples }));

    expect(html).not.toContain('class="mark"');
    expect(html).not.toContain('faults off');
    expect(html).not.toContain('dashed vertical lines');
  });
});

describe('provider figures: one number in the chart and the text', () => {
  let seq = 0;
  const effect = (
    endpoint: string,
    key: string,
    answer: PerformedEffect['answer'] = 'sent',
    atSecond = seq,
  ): PerformedEffect => {
    seq += 1;
    return {
      seq,
      endpoint,
      key,
      payload: { instruction: 'PICK' },
      performedAt: new Date(T0 + atSecond * 1000).toISOString(),
      id: `id-${seq}`,
      answer,
      traceparent: null,
    };
  };
  const counts = (performed: number, replayed: number, inProgress: number, atSecond: number) => ({
    requests: performed + replayed + inProgress,
    performed,
    replayed,
    inProgress,
    payloadMismatch: 0,
    chaosRefused: 0,
    absorbedAt: Array.from({ length: replayed + inProgress }, () => new Date(T0 + atSecond * 1000).toISOString()),
  });
  // The warehouse lost answers and absorbed retries too: its line (the shop's) does not say so, the rows must.
  const log: ProviderLog = {
    performed: [
      effect('mail', 'loyalty:o1.placed', 'dropped', 1),
      effect('mail', 'loyalty:o2.placed', 'sent', 2),
      effect('warehouse', 'fulfilment:o1.placed', 'abandoned', 3),
      effect('warehouse', 'fulfilment:o2.placed', 'dropped', 4),
      effect('warehouse', 'fulfilment:o3.placed', 'sent', 5),
    ],
    keyless: [],
    keys: {
      mail: { 'loyalty:o1.placed': counts(1, 1, 0, 6), 'loyalty:o2.placed': counts(1, 0, 0, 6) },
      warehouse: {
        'fulfilment:o1.placed': counts(1, 1, 1, 7),
        'fulfilment:o2.placed': counts(1, 2, 0, 8),
        'fulfilment:o3.placed': counts(1, 0, 0, 8),
      },
    },
    counters: {} as ProviderLog['counters'],
    chaos: {},
  };

  it('draws each provider apart, each line ending on the figure its row states', () => {
    const verification = {
      ...emptyVerification(),
      providerLines: providerLines(summarizeProviders(log), 3, {}),
      providers: providerFigures(log),
    };
    const pipeline: PipelineSamples = { intervalMs: 1_000, startedAtMs: T0, samples: [], marks: [], effectLag: [] };

    const html = htmlReport(run({ verification, pipeline }));

    const last = lastValues(html);
    expect(html).toContain(
      '<th>provider mail</th><td>2 performed, 0 duplicates, 1 answers lost, 1 retried calls absorbed by the key</td>',
    );
    expect(html).toContain(
      '<th>provider warehouse</th><td>3 performed, 0 duplicates, 2 answers lost, 4 retried calls absorbed by the key</td>',
    );
    expect(last).toMatchObject({
      'mail performed': 2,
      'mail answers lost': 1,
      'mail absorbed by the key': 1,
      'warehouse performed': 3,
      'warehouse answers lost': 2,
      'warehouse absorbed by the key': 4,
    });
    // The domain's mail line says the same numbers as its row and its lines.
    expect(verification.providerLines[0]).toContain('1 answers lost, 1 retried calls absorbed by the key');
  });
});

describe('counts for this run only', () => {
  it("says the provider keys forgotten are this run's", () => {
    const results = run({ injected: { poisonMessages: 0, redriven: 0, providerKeysForgotten: 4 } });

    expect(terminalSummary(results)).toContain('4 provider keys of this run forgotten before the redrive');
    expect(htmlReport(results)).toContain(
      '<th>keys forgotten</th><td>4 idempotency key(s) of this run forgotten by the provider before the redrive</td>',
    );
  });
});

describe('counts for this run only: the DLQ depth', () => {
  it("charts what each DLQ gained during the run, not an earlier run's messages", () => {
    const pipeline: PipelineSamples = {
      intervalMs: 1_000,
      samples: [0, 1, 2].map((second) => ({
        second,
        queues: { 'Loyalty DLQ': { visible: 5 + second, inFlight: 0, delayed: 0 } }, // 5 from an earlier run
      })),
      marks: [],
      effectLag: [],
    };

    const html = htmlReport(run({ pipeline }));

    expect(lastValues(html)['Loyalty DLQ']).toBe(2);
  });
});

describe('short runs stay meaningful', () => {
  it('buckets a 3-second load in tenths of a second, so its charts have points, not a two-point line', () => {
    const observations = Array.from({ length: 30 }, (_, i) => ({
      index: i,
      status: 201 as const,
      replayed: false,
      startedAt: T0 + i * 100,
      latencyMs: 50 + i,
    }));

    const results = summarize({
      ...smokeRunResults(emptyVerification()),
      plan: [],
      observations,
      durationMs: 3_000,
      verification: emptyVerification(),
    });
    const html = htmlReport(results);

    expect(timelineBucketSeconds(3_000)).toBe(0.1);
    expect(timelineBucketSeconds(600_000)).toBe(1);
    expect(results.timeline.length).toBeGreaterThanOrEqual(25);
    expect(results.timeline[0].perSecond).toBe(10); // one request in a tenth of a second
    expect((html.match(/<circle class="point" data-series="req\/s"/g) ?? []).length).toBe(results.timeline.length);
  });
});

describe('one colour per consumer throughout', () => {
  it('gives each consumer the same colour in every chart and in the trace, and another consumer another', () => {
    const verification = {
      ...emptyVerification(),
      appliedEffects: { fulfilment: 3, loyalty: 2 },
      duplicatesSuppressed: { fulfilment: 1, loyalty: 4 },
      deadLetters: [{ queue: 'loyalty DLQ', cause: 'poison (SchemaViolation)', count: 3, expected: true }],
    };
    const pipeline: PipelineSamples = {
      intervalMs: 1_000,
      samples: [0, 1].map((second) => ({
        second,
        queues: {
          Fulfilment: { visible: 1, inFlight: 1, delayed: 0 },
          Loyalty: { visible: 1, inFlight: 1, delayed: 0 },
          'Loyalty DLQ': { visible: 3, inFlight: 0, delayed: 0 },
        },
        counters: { 'EffectApplied{consumer=loyalty}': second, 'DuplicateSuppressed{consumer=fulfilment}': second },
      })),
      marks: [],
      effectLag: [{ second: 0, consumer: 'loyalty', p50: 100, p99: 200, count: 2 }],
    };
    const trace: OrderTrace = {
      traceId: 't',
      durationMs: 10,
      eventIds: ['e'],
      omitted: 0,
      ofTraces: 1,
      spans: [
        {
          hop: 'consumer',
          traceId: 't',
          spanId: 's',
          start: 0,
          end: 10,
          depth: 0,
          attributes: { consumer: 'loyalty' },
        },
      ],
    };

    const html = htmlReport(run({ verification, pipeline, trace: { recorded: 1, slowest: trace } }));

    const colour = (pattern: RegExp) => [...html.matchAll(pattern)].map((m) => m[1]);
    const loyalty = [
      ...colour(/data-label="loyalty(?::[^"]*)?" data-value="\d+"[^>]* fill="([^"]+)"/g),
      ...colour(
        /data-series="(?:Loyalty|Loyalty DLQ|applied \(loyalty\)|loyalty p50|loyalty p99)"[^>]* stroke="([^"]+)"/g,
      ),
      ...colour(/data-hop="consumer"[\s\S]*?<rect [^>]*fill="([^"]+)"/g),
    ];
    const fulfilment = [
      ...colour(/data-label="fulfilment(?::[^"]*)?" data-value="\d+"[^>]* fill="([^"]+)"/g),
      ...colour(/data-series="(?:Fulfilment|duplicates \(fulfilment\))"[^>]* stroke="([^"]+)"/g),
    ];
    expect(loyalty.length).toBeGreaterThanOrEqual(10);
    expect(new Set(loyalty).size).toBe(1);
    expect(fulfilment.length).toBeGreaterThanOrEqual(5);
    expect(new Set(fulfilment).size).toBe(1);
    expect(loyalty[0]).not.toBe(fulfilment[0]);
  });
});

describe('readable trace ticks', () => {
  it('reads a 28,674 ms trace in seconds on round steps', () => {
    const trace: OrderTrace = {
      traceId: 't',
      durationMs: 28_674,
      eventIds: ['e'],
      omitted: 0,
      ofTraces: 1,
      spans: [{ hop: 'api', traceId: 't', spanId: 'a', start: T0, end: T0 + 28_674, depth: 0 }],
    };

    const svg = waterfallChart(trace, '');

    expect([...svg.matchAll(/class="t-tick"[^>]*>([^<]+)</g)].map((m) => m[1])).toEqual([
      '0 s',
      '5 s',
      '10 s',
      '15 s',
      '20 s',
      '25 s',
    ]);
    expect(svg).not.toMatch(/>[^<]*28674[^<]*</); // no text a reader sees (the data attributes keep the ms)
    expect(svg).toContain('28.7 s from the API call');
  });
});

describe('a report a person can trust', () => {
  const provenance: Provenance = {
    commit: '0123456789abcdef0123456789abcdef01234567',
    stack: 'local',
    region: 'us-east-1',
    node: 'v24.1.0',
    load: '20 intents on 4 connections, drain bound 180 s',
    rates: 'requests as fast as the connections go; fault rate 0.1 (relay-crash 1)',
    command: 'npm run loadtest -- --profile smoke --faults all --seed 7',
  };

  it('states the provenance: commit, target, region, Node, profile, seed, faults, rates and the command', () => {
    const results = run({ provenance, seed: 7, faults: ['crash', 'relay-crash'] });

    const html = htmlReport(results);
    const terminal = terminalSummary(results);

    for (const [row, value] of [
      ['commit', provenance.commit],
      ['target', 'local (the local runtime, us-east-1)'],
      ['Node', 'v24.1.0'],
      ['profile', 'smoke: 20 intents on 4 connections, drain bound 180 s'],
      ['seed', '7'],
      ['faults', 'crash, relay-crash'],
      ['rates', provenance.rates],
      ['reproduce', provenance.command],
    ])
      expect(html).toContain(`<tr><th>${row}</th><td>${value}</td></tr>`);
    expect(terminal).toContain(`  reproduce       ${provenance.command}`);
    expect(terminal).toContain(`commit ${provenance.commit}, local, us-east-1, Node v24.1.0`);
  });

  it('builds the command that reproduces a run: its arguments with the seed it used', () => {
    expect(reproduceCommand(['--profile', 'smoke', '--faults', 'all'], 7)).toBe(
      'npm run loadtest -- --profile smoke --faults all --seed 7',
    );
    expect(reproduceCommand(['--seed', '3', '--mix', 'new=1,read=0', '--seed=4'], 3)).toBe(
      'npm run loadtest -- --mix new=1,read=0 --seed 3',
    );
    expect(reproduceCommand(['--report-dir', "my results's"], 1)).toBe(
      `npm run loadtest -- --report-dir 'my results'\\''s' --seed 1`,
    );
  });

  it('reads the commit in a checkout, and says unknown outside one', () => {
    expect(gitCommit()).toMatch(/^([0-9a-f]{40}( \(uncommitted changes\))?|unknown)$/);
    expect(gitCommit(fs.mkdtempSync(path.join(os.tmpdir(), 'no-checkout-')))).toBe('unknown');
  });

  it('"not drained" is its own verdict, never "FAIL, 0 violations"', () => {
    const results = run({ drain: { drained: false, waitedMs: 180_000 }, passed: false });

    const html = htmlReport(results);
    const terminal = terminalSummary(results);

    expect(verdictOf(0, results.drain).kind).toBe('not-drained');
    expect(html).toContain('<span id="verdict" class="not-drained">NOT DRAINED after 180 s</span>');
    expect(html).toContain(
      '<strong>Work was still in the pipeline, so the 0 violations found prove nothing yet.</strong>',
    );
    expect(`${html}${terminal}`).not.toMatch(/FAIL, 0 violation/);
    expect(terminal).toContain('RESULT          NOT DRAINED after 180 s: work was still in the pipeline');
    expect(verdictOf(2, results.drain).headline).toBe('FAIL, 2 violation(s), and not drained after 180 s');
    expect(verdictOf(0, { drained: true, waitedMs: 1 }).kind).toBe('pass');
  });

  it("states the load's HTTP statuses with what each means", () => {
    const results = run();
    results.http = { ...results.http, statuses: { '201': 23, '409': 2, '200': 4 }, replaysServed: 3 };

    expect(htmlReport(results)).toContain(
      '<tr><th>statuses</th><td>200 x 4 (read), 201 x 23 (created or replayed; 3 replays), 409 x 2 (in progress)</td></tr>',
    );
  });
});

describe('a line while draining', () => {
  const sqs = mockClient(SQSClient);
  const dynamodb = mockClient(DynamoDBClient);

  it('says what is left: queued, in flight, in DLQs, outbox pending, and the time', () => {
    expect(
      drainProgressLine({ pendingOutbox: 1, inFlightMessages: 5, queued: 3, received: 2 }, 40_400, 180_000, 2),
    ).toBe(
      '  draining: 3 queued, 2 in flight (being processed or backing off), 2 in DLQs, 1 outbox pending; 40 s of at most 180 s',
    );
  });

  it('prints it periodically while the drain waits, until it drains', async () => {
    const domain = exampleDomain();
    const consumers = domain.consumers;
    const outputs: Record<string, string> = { [domain.outboxTableOutput]: 'outbox' };
    for (const c of consumers) {
      outputs[consumerOutputNames(c.name).queueUrl] = `q-${c.name}`;
      outputs[consumerOutputNames(c.name).deadLetterQueueUrl] = `dlq-${c.name}`;
    }
    let polls = 0;
    sqs.on(GetQueueAttributesCommand).callsFake((input: { QueueUrl: string }) => ({
      Attributes: { ApproximateNumberOfMessages: input.QueueUrl.startsWith('q-') && polls < 3 ? '1' : '0' },
    }));
    dynamodb.on(QueryCommand).callsFake(() => {
      polls += 1 / PENDING_SHARDS; // one query per outbox shard
      return { Count: 0 };
    });
    const target = { outputs, domain, sqs: new SQSClient({}), dynamodb: new DynamoDBClient({}) } as unknown as Target;
    const lines: string[] = [];

    const result = await waitForDrain(target, {
      timeoutMs: 10_000,
      pollMs: 1,
      progressEveryMs: 0,
      onProgress: (line) => lines.push(line),
    });

    expect(result.drained).toBe(true);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines[0]).toMatch(
      /^ {2}draining: \d+ queued, 0 in flight \(being processed or backing off\), 0 in DLQs, 0 outbox pending; \d+ s of at most 10 s$/,
    );
  });
});
