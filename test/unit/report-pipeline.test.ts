import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { htmlReport, terminalSummary, UNIT_PRICES, type CallCounts } from '@exactly-once/tools/proof-kit/report';
import { lineChart } from '@exactly-once/tools/proof-kit/svg-charts';
import { lagOverTime, startSampler, type PipelineSamples } from '@exactly-once/tools/proof-kit/sampler';
import type { Target } from '@exactly-once/tools/proof-kit/target';
import { smokeRunResults } from '../support/run-results';
import { PROBE_CONSUMERS } from '../exactly-once/fixtures/probe-spec';

const verification = {
  violations: [],
  counts: { intents: 2, entities: 2, providerKeys: 4 },
  entityNoun: 'orders',
  entityNounSingular: 'order',
  effectsChecked: '0 cancelled; 1 SKUs, 1 customers',
  duplicatesSuppressed: {},
  appliedEffects: {},
  consumerMetrics: {},
  deadLetters: [],
};

const results = (pipeline?: PipelineSamples, calls?: CallCounts) => smokeRunResults(verification, { pipeline, calls });

const samples: PipelineSamples = {
  intervalMs: 1_000,
  samples: [
    {
      second: 0,
      queues: {
        Fulfilment: { visible: 5, inFlight: 2, delayed: 1 },
        'Fulfilment DLQ': { visible: 0, inFlight: 0, delayed: 0 },
      },
      counters: { 'EffectApplied{consumer=fulfilment}': 0, 'TransientFailure{consumer=fulfilment}': 0 },
    },
    {
      second: 1,
      queues: {
        Fulfilment: { visible: 0, inFlight: 0, delayed: 0 },
        'Fulfilment DLQ': { visible: 1, inFlight: 0, delayed: 0 },
      },
      counters: { 'EffectApplied{consumer=fulfilment}': 7, 'TransientFailure{consumer=fulfilment}': 1 },
    },
  ],
  marks: [{ second: 0.5, label: 'faults off' }],
  effectLag: [{ second: 0, consumer: 'fulfilment', p50: 120, p99: 900, count: 2 }],
};

describe('proof report: the pipeline over time', () => {
  it('charts queue depth, in flight, DLQ depth, consumer counters, failures and effect lag, with the run marks', () => {
    const html = htmlReport(results(samples));

    for (const title of [
      'Queue depth (visible + delayed), per source queue',
      'In flight (received, not yet deleted), per source queue',
      'DLQ depth, per dead-letter queue (added during this run)',
      'Effects applied, owed provider calls completed and duplicates suppressed, per consumer (cumulative, metrics flushed (a crashed invocation flushes none))',
      'Failures, injected or not, per consumer (cumulative)',
      'Effect lag, request accepted -&gt; effect applied (by second accepted)',
    ])
      expect(html).toContain(`<figcaption>${title}</figcaption>`);
    expect(html).toContain('data-series="Fulfilment"');
    expect(html).toContain('data-series="Fulfilment DLQ"');
    expect(html).toContain('data-series="applied (fulfilment)"');
    expect(html).toContain('data-series="transient (fulfilment)"');
    expect(html).toContain('data-series="fulfilment p99"');
    expect(html.match(/class="mark"/g)).toHaveLength(6);
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/); // self-contained
  });

  it("charts the provider calls, from the run's provider figures, only where there is a local provider", () => {
    const providers = [
      {
        provider: 'mail',
        performed: 2,
        duplicates: 0,
        answersLost: 1,
        absorbedByKey: 1,
        at: { performed: [1_000, 2_000], answersLost: [1_000], absorbed: [3_000] },
      },
    ];

    const charted = htmlReport({ ...results(samples), verification: { ...verification, providers } });
    const without = htmlReport(results(samples));

    expect(charted).toContain('<figcaption>Provider calls, at the local provider (cumulative)</figcaption>');
    for (const series of ['mail performed', 'mail absorbed by the key', 'mail answers lost'])
      expect(charted).toContain(`data-series="${series}"`);
    expect(without).not.toContain('Provider calls, at the local provider');
  });

  it('draws a series of one point as a dot: a smoke run accepts every order in one effect-lag bucket', () => {
    const oneBucket: PipelineSamples = {
      ...samples,
      effectLag: [{ second: 0, consumer: 'loyalty', p50: 400, p99: 1_200, count: 20 }],
    };

    const html = htmlReport(results(oneBucket));

    expect(html).toMatch(/<circle class="point" data-series="loyalty p50" cx="[\d.]+" cy="[\d.]+" r="4"/);
    expect(html).toMatch(/<circle class="point" data-series="loyalty p99" /);
  });

  it('draws each point of a short series as a dot on its line, and none on a long one', () => {
    const few = lineChart('few', [{ name: 'q', color: '#000', points: [0, 1].map((x) => ({ x, y: 1 })) }], {
      x: 's',
      y: 'n',
    });
    const many = lineChart(
      'many',
      [{ name: 'q', color: '#000', points: Array.from({ length: 60 }, (_, x) => ({ x, y: 1 })) }],
      { x: 's', y: 'n' },
    );

    expect(few.match(/<circle class="point" data-series="q"/g)).toHaveLength(2);
    expect(few).toContain('<path class="series" data-series="q"');
    expect(many).not.toContain('<circle');
  });

  it('keeps the report as it was when the run was not sampled', () => {
    const html = htmlReport(results());

    expect(html).not.toContain('Queue depth');
  });

  it('buckets effect lag by the second the order was accepted, per consumer', () => {
    const applied = new Map([
      ['probe-fifo:e1', 1_300],
      ['probe:e1', 1_100],
      ['probe-fifo:e2', 7_500],
    ]);

    const lag = lagOverTime(
      applied,
      [
        { eventId: 'e1', acceptedAt: 1_000 },
        { eventId: 'e2', acceptedAt: 6_500 },
        { eventId: 'e3', acceptedAt: 6_600 }, // no effect yet: left out, not counted as zero
      ],
      0,
      5,
      PROBE_CONSUMERS.map((c) => c.name),
    );

    expect(lag).toEqual([
      { second: 0, consumer: 'probe', p50: 100, p99: 100, count: 1 },
      { second: 0, consumer: 'probe-fifo', p50: 300, p99: 300, count: 1 },
      { second: 5, consumer: 'probe-fifo', p50: 1_000, p99: 1_000, count: 1 },
    ]);
  });
});

describe('proof report: cost per million orders', () => {
  const withCalls = (calls: CallCounts) => results(undefined, calls);

  it('prices the measured calls per order with the shared price table, SQS at the FIFO rate', () => {
    // 2 orders: 2 API requests, 4 invocations, 10 writes, 2 reads and 6 SQS requests per order.
    const report = withCalls({ apiRequests: 4, lambdaInvocations: 8, dynamodbWrites: 20, dynamodbReads: 4, sqs: 12 });

    expect(report.costPerMillionEntities).toBeCloseTo(
      2 * UNIT_PRICES.apiGatewayRestPerMillion +
        4 * UNIT_PRICES.lambdaRequestsPerMillion +
        10 * UNIT_PRICES.dynamoDbWritesPerMillion +
        2 * UNIT_PRICES.dynamoDbReadsPerMillion +
        6 * UNIT_PRICES.sqsFifoPerMillion,
      10,
    );
  });

  it('computes no cost where the calls were not measured (AWS target)', () => {
    expect(withCalls({ apiRequests: 4 }).costPerMillionEntities).toBeUndefined();
  });

  it("says the calls and the cost per entity in the domain's words, in the terminal and the HTML", () => {
    // Arrange
    const bookings = { ...verification, entityNoun: 'bookings', entityNounSingular: 'booking' };
    const calls = { apiRequests: 4, lambdaInvocations: 8, dynamodbWrites: 20, dynamodbReads: 4, sqs: 12 };

    // Act
    const run = smokeRunResults(bookings, { calls });
    const terminal = terminalSummary(run);
    const html = htmlReport(run);

    // Assert
    expect(terminal).toMatch(/^ {2}per booking {5}API 2\.00, Lambda 4\.00,/m);
    expect(terminal).toMatch(/per million bookings in requests/);
    expect(html).toMatch(/per million bookings \(/);
    expect(`${terminal}${html}`).not.toMatch(/\border(s)?\b/);
  });
});

describe('pipeline sampler', () => {
  const sqs = mockClient(SQSClient);
  let server: http.Server;
  let applied = 0;

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      res.end(JSON.stringify({ metrics: { 'EffectApplied{consumer=probe}': applied, OrderPlaced: 99 } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('samples each queue and the consumer counters since it started', async () => {
    sqs.reset();
    sqs.on(GetQueueAttributesCommand, { QueueUrl: 'q-probe' }).resolves({
      Attributes: {
        ApproximateNumberOfMessages: '3',
        ApproximateNumberOfMessagesNotVisible: '2',
        ApproximateNumberOfMessagesDelayed: '1',
      },
    });
    sqs
      .on(GetQueueAttributesCommand, { QueueUrl: 'q-probe-dlq' })
      .resolves({ Attributes: { ApproximateNumberOfMessages: '4' } });
    applied = 10; // before the run: not counted
    const target = {
      outputs: { ProbeQueueUrl: 'q-probe', ProbeDlqUrl: 'q-probe-dlq' },
      sqs: new SQSClient({ region: 'us-east-1' }),
    } as unknown as Target;
    const { port } = server.address() as AddressInfo;

    const sampler = await startSampler(target, {
      intervalMs: 60_000,
      statsUrl: `http://127.0.0.1:${port}/__local/stats`,
      consumers: PROBE_CONSUMERS,
    });
    applied = 15;
    sampler.mark('load done');
    const result = await sampler.stop();

    const last = result.samples.at(-1)!;
    expect(last.queues).toEqual({
      Probe: { visible: 3, inFlight: 2, delayed: 1 },
      'Probe DLQ': { visible: 4, inFlight: 0, delayed: 0 },
    });
    expect(last.counters).toEqual({ 'EffectApplied{consumer=probe}': 5 });
    expect(result.marks.map((m) => m.label)).toEqual(['load done']);
    expect(result.effectLag).toEqual([]);
  });
});

describe('proof report: charts as a reader sees them', () => {
  it('labels the x axis on round steps, not only its end, and gives each run mark its own row', () => {
    const chart = lineChart(
      'Queue depth',
      [{ name: 'q', color: '#000', points: [0, 40, 97].map((x) => ({ x, y: 1 })) }],
      { x: 'seconds into the run', y: 'messages' },
      [
        { x: 95, label: 'faults off' },
        { x: 97, label: 'redrive' },
      ],
    );

    expect([...chart.matchAll(/class="x-tick"[^>]*>([^<]+)</g)].map((m) => m[1])).toEqual([
      '0',
      '20',
      '40',
      '60',
      '80',
      '100',
    ]);
    const labels = [...chart.matchAll(/class="mark-label" x="[\d.]+" y="([\d.]+)" text-anchor="(\w+)"/g)];
    expect(new Set(labels.map((m) => m[1])).size).toBe(2);
    // Near the right edge: written leftward from its line, inside the chart.
    expect(labels.map((m) => m[2])).toEqual(['end', 'end']);
  });

  it('plots the effect lag in seconds: a redriven effect minutes late reads as minutes, not 100,000', () => {
    const html = htmlReport(
      results({ ...samples, effectLag: [{ second: 0, consumer: 'loyalty', p50: 1_500, p99: 95_000, count: 2 }] }),
    );
    const lag = html.slice(html.indexOf('Effect lag'));

    expect(lag).toContain('>seconds</text>');
    expect(lag).toMatch(/>100<\/text>/);
    expect(lag).not.toMatch(/>100000<\/text>/);
  });

  it('lays the charts out in a grid that fills the page, each scaled to its column', () => {
    const html = htmlReport(results(samples));

    expect(html).toContain('.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr))');
    expect(html).toMatch(/<div class="charts">\s*<figure>/);
    expect(html).not.toMatch(/<svg[^>]* width="640"/);
  });
});
