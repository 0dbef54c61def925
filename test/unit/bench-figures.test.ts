import { gbSecondsPerOrder, unitsByTable } from '@exactly-once/tools/bench/cost-model';
import { parseProcStatTicks, perCpuSecond } from '@exactly-once/tools/bench/cpu';
import {
  batchLine,
  benchFailures,
  closingLines,
  consumerLine,
  consumerStepModel,
  faultLine,
  faultVerdict,
  hopLine,
  perSecond,
  ratio,
  steadyWindow,
  stepRatesLine,
  summarizeLatencies,
} from '@exactly-once/tools/bench/figures';
import { unitsPerOrderByTable } from '@exactly-once/tools/bench/cost-model';
import { describeMix, type RoundTrip } from '@exactly-once/tools/bench/round-trips';
import {
  apiKeyReadsPerEntity,
  costBreakdown,
  sqsBilledRequests,
  UNIT_PRICES,
} from '@exactly-once/tools/proof-kit/prices';

const trip = (operation: string, tables: string[], items = 1, capacity: RoundTrip['capacity'] = {}): RoundTrip => ({
  operation,
  tables,
  items,
  capacity,
});

describe('bench arithmetic', () => {
  it('takes p50 and p99 by nearest rank over unsorted latencies', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted

    const summary = summarizeLatencies(values);

    expect(summary).toEqual({ count: 100, p50: 51, p99: 100 });
  });

  it('reports zero, not Infinity, for an empty span or an unmeasured denominator', () => {
    expect(perSecond(10, 0)).toBe(0);
    expect(ratio(5, 0)).toBe(0);
    expect(perSecond(120, 2_000)).toBe(60);
    expect(ratio(11, 27)).toBeCloseTo(0.4074, 4);
  });

  it('prices each component as units per order times the price per million units', () => {
    const cost = costBreakdown({
      apiRequestsPerEntity: 1,
      lambdaInvocationsPerEntity: 4,
      lambdaGbSecondsPerEntity: 0.1,
      dynamoDb: { orders: { writeUnits: 6, readUnits: 0 }, effects: { writeUnits: 12, readUnits: 2 } },
      sqsRequestsPerEntity: 3,
    });

    const dollars = Object.fromEntries(cost.components.map((c) => [c.component, c.dollarsPerMillionEntities]));
    expect(dollars['API Gateway REST requests']).toBeCloseTo(3.5, 10);
    expect(dollars['Lambda requests']).toBeCloseTo(0.8, 10);
    expect(dollars['Lambda duration (GB-s, arm64)']).toBeCloseTo(0.1 * 1_000_000 * UNIT_PRICES.lambdaArmGbSecond, 10);
    expect(dollars['DynamoDB orders WRU']).toBeCloseTo(3.75, 10);
    expect(dollars['DynamoDB effects WRU']).toBeCloseTo(7.5, 10);
    expect(dollars['DynamoDB effects RRU']).toBeCloseTo(0.25, 10);
    expect(dollars['DynamoDB orders RRU']).toBeUndefined(); // no reads: no line
    expect(dollars['SQS requests (64 KB chunks)']).toBeCloseTo(1.5, 10);
    expect(cost.totalPerMillionEntities).toBeCloseTo(3.5 + 0.8 + 1.33334 + 3.75 + 7.5 + 0.25 + 1.5, 4);
  });

  it("prices the providers' API key reads as SecureString reads, amortised over the orders of one cache period", () => {
    // 2 keys (one per consumer with a provider), each read once per 300 s, at 20 orders/s: 2 reads per 6,000 orders.
    const reads = apiKeyReadsPerEntity({ entitiesPerSecond: 20, cacheSeconds: 300, keysPerContainer: 2 });

    const cost = costBreakdown({
      apiRequestsPerEntity: 0,
      lambdaInvocationsPerEntity: 0,
      dynamoDb: {},
      sqsRequestsPerEntity: 0,
      apiKeyReadsPerEntity: reads,
    });

    expect(reads).toBeCloseTo(2 / 6_000, 12);
    expect(cost.components.at(-1)).toMatchObject({
      component: 'provider API key reads (SSM SecureString, KMS decrypt)',
      dollarsPerMillionEntities: (2 / 6_000) * 3,
    });
    expect(apiKeyReadsPerEntity({ entitiesPerSecond: 0, cacheSeconds: 300, keysPerContainer: 2 })).toBe(0);
  });

  it('leaves Lambda duration out when it was not measured', () => {
    const cost = costBreakdown({
      apiRequestsPerEntity: 1,
      lambdaInvocationsPerEntity: 1,
      dynamoDb: {},
      sqsRequestsPerEntity: 0,
    });

    expect(cost.components.map((c) => c.component)).not.toContain('Lambda duration (GB-s, arm64)');
  });

  it('counts two write units per transactional item and the reported capacity for single writes', () => {
    const trips = [
      trip('TransactWriteItems', ['Effects'], 4, { Effects: { write: 2, read: 0 } }), // emulator under-reports
      trip('UpdateItem', ['Orders'], 1, { Orders: { write: 2, read: 0 } }), // item + index write
      trip('PutItem', ['Idem'], 1), // nothing reported: one unit
      trip('GetItem', ['Orders'], 1),
    ];

    const units = unitsByTable(trips, (t) => t.toLowerCase());

    expect(units).toEqual({
      effects: { writeUnits: 8, readUnits: 0 },
      orders: { writeUnits: 2, readUnits: 1 },
      idem: { writeUnits: 1, readUnits: 0 },
    });
  });

  it('sums GB-seconds over functions at their memory sizes, per order', () => {
    const perOrder = gbSecondsPerOrder(
      [
        { memoryMb: 1024, busyMs: 2_000 },
        { memoryMb: 256, busyMs: 4_000 },
      ],
      10,
    );

    expect(perOrder).toBeCloseTo((2 + 1) / 10, 10);
  });

  it('bills SQS payloads in 64 KB chunks', () => {
    expect(sqsBilledRequests(600)).toBe(1);
    expect(sqsBilledRequests(64 * 1024)).toBe(1);
    expect(sqsBilledRequests(64 * 1024 + 1)).toBe(2);
  });

  it('describes an order mix by operation, item count and table', () => {
    const mix = describeMix(
      [
        trip('PutItem', ['idem']),
        trip('TransactWriteItems', ['orders'], 2),
        trip('UpdateItem', ['provider']),
        trip('UpdateItem', ['provider']),
      ],
      (t) => t,
    );

    expect(mix).toBe('PutItem on idem x1, TransactWriteItems(2 items) on orders x1, UpdateItem on provider x2');
  });
});

const closing = {
  pipelineOrdersPerSecond: 41.2,
  pipelineOrdersPerCpuSecond: 22.5,
  emulatorLimitOrdersPerSecond: 72,
  apiReplayP50Ms: 11,
  apiFirstRequestP50Ms: 27,
  cleanPathCostPerMillion: 13.2,
  defaultPlanCostPerMillion: 19.4,
  idleCostPerMonth: 7.45,
  batchSize: 10,
  batches: [
    {
      provider: 'a 50 ms HTTP provider',
      plain: { messagesPerSecond: 200, messagesPerCpuSecond: 400, roundTripsPerMessage: 1 },
      powertools: { messagesPerSecond: 160, messagesPerCpuSecond: 150, roundTripsPerMessage: 3 },
      ours: { messagesPerSecond: 180, messagesPerCpuSecond: 200, roundTripsPerMessage: 2 },
      sequenced: { messagesPerSecond: 190, messagesPerCpuSecond: 300, roundTripsPerMessage: 2 },
    },
    {
      provider: 'a DynamoDB-write provider',
      plain: { messagesPerSecond: 208, messagesPerCpuSecond: 0, roundTripsPerMessage: 1 },
      powertools: { messagesPerSecond: 180, messagesPerCpuSecond: 0, roundTripsPerMessage: 3 },
      ours: { messagesPerSecond: 171, messagesPerCpuSecond: 0, roundTripsPerMessage: 2 },
      sequenced: { messagesPerSecond: 187, messagesPerCpuSecond: 0, roundTripsPerMessage: 2 },
    },
  ],
  faults: { messages: 200, seed: 7, ours: 0, sequenced: 0, plain: 31, powertools: 9 },
};

describe('bench closing lines', () => {
  it('print exactly the agreed lines, the comparison under faults last', () => {
    const lines = closingLines(closing);

    expect(lines).toEqual([
      'bench: pipeline 41.2 orders/s over the steady window = 57% of the emulator limit (72.0 orders/s); 22.5 orders per CPU-second',
      'bench: api replay p50 0.41x first-request p50 (11 vs 27 ms)',
      'bench: cost $13.20 per million orders (clean path), $19.40 (default plan); idle $7.45 per month',
      "bench: exactly-once in batches of 10 with a 50 ms HTTP provider: 0.90x the plain consumer's msg/s (180 vs 200), 1.13x the Powertools consumer's (160); 2 round trips vs 1 and 3; per CPU-second 0.50x plain, 1.33x Powertools (200 vs 400 and 150)",
      "bench: exactly-once on the sequenced ledger in batches of 10 with a 50 ms HTTP provider: 0.95x the plain consumer's msg/s (190 vs 200), 1.19x the Powertools consumer's (160); 2 round trips vs 1 and 3; per CPU-second 0.75x plain, 2.00x Powertools (300 vs 400 and 150)",
      "bench: exactly-once in batches of 10 with a DynamoDB-write provider: 0.82x the plain consumer's msg/s (171 vs 208), 0.95x the Powertools consumer's (180); 2 round trips vs 1 and 3; per CPU-second not measured",
      "bench: exactly-once on the sequenced ledger in batches of 10 with a DynamoDB-write provider: 0.90x the plain consumer's msg/s (187 vs 208), 1.04x the Powertools consumer's (180); 2 round trips vs 1 and 3; per CPU-second not measured",
      'bench: double effects under crash and duplicate faults (200 messages, seed 7): this 0, on the sequenced ledger 0, plain 31, Powertools 9',
    ]);
  });

  it('say what was not measured rather than print a zero, and print fractional round trips with one decimal', () => {
    const lines = closingLines({
      ...closing,
      pipelineOrdersPerSecond: undefined,
      pipelineOrdersPerCpuSecond: undefined,
      idleCostPerMonth: undefined,
      batches: [{ ...closing.batches[1], ours: { ...closing.batches[1].ours, roundTripsPerMessage: 2.25 } }],
    });

    expect(lines[0]).toBe(
      'bench: pipeline steady-window throughput not measured (the last of the orders was accepted before the first completed: too few orders for the lag); emulator limit 72.0 orders/s; per CPU-second not measured',
    );
    expect(lines[2]).toBe('bench: cost $13.20 per million orders (clean path), $19.40 (default plan)');
    expect(lines[3]).toBe(
      "bench: exactly-once in batches of 10 with a DynamoDB-write provider: 0.82x the plain consumer's msg/s (171 vs 208), 0.95x the Powertools consumer's (180); 2.3 round trips vs 1 and 3; per CPU-second not measured",
    );
  });

  it("name the domain's entities by its proof domain's noun", () => {
    const lines = closingLines(closing, 'bookings');

    expect(lines[0]).toBe(
      'bench: pipeline 41.2 bookings/s over the steady window = 57% of the emulator limit (72.0 bookings/s); 22.5 bookings per CPU-second',
    );
    expect(lines[2]).toBe(
      'bench: cost $13.20 per million bookings (clean path), $19.40 (default plan); idle $7.45 per month',
    );
    expect(lines.join('\n')).not.toContain('order');
  });
});

describe('bench steady window', () => {
  it('counts the orders completed between the first completion and the last acceptance, over that span', () => {
    // Accepted at 0..9 s; each completes 3 s later (fixed lag): the window is 3 s..9 s.
    const accepted = Array.from({ length: 10 }, (_, i) => i * 1_000);
    const completed = accepted.map((t) => t + 3_000);

    const window = steadyWindow(accepted, completed);

    // Completions at 4..9 s are inside (3 s opens the window): 6 orders in 6 s.
    expect(window).toEqual({ startMs: 3_000, endMs: 9_000, spanMs: 6_000, completed: 6, ordersPerSecond: 1 });
  });

  it('is the same rate whatever the fixed lag, as long as the run is longer than the lag', () => {
    const accepted = Array.from({ length: 21 }, (_, i) => i * 500);
    const short = steadyWindow(
      accepted,
      accepted.map((t) => t + 1_000),
    );
    const long = steadyWindow(
      accepted,
      accepted.map((t) => t + 6_000),
    );

    expect(short?.ordersPerSecond).toBeCloseTo(2);
    expect(long?.ordersPerSecond).toBeCloseTo(2);
  });

  it('has no window when the last order was accepted before the first completed', () => {
    expect(steadyWindow([0, 100, 200], [5_000, 5_100, 5_200])).toBeUndefined();
    expect(steadyWindow([], [])).toBeUndefined();
  });
});

describe('bench detail lines', () => {
  it('print a consumer side with its CPU-normalised rate and write units', () => {
    const side = {
      messagesPerSecond: { first: 171.4, duplicate: 300 },
      roundTripsPerMessage: { first: 2, duplicate: 1 },
      writeUnitsPerMessage: { first: 5, duplicate: 4 },
      providerCallsPerMessage: { first: 1, duplicate: 0 },
    };

    expect(consumerLine('this consumer', side, 95.2, { messages: 200, concurrency: 16 })).toBe(
      'bench: this consumer: first delivery 171 msg/s (95 msg per CPU-second), 2.0 round trips and 5.0 WRU/msg; duplicate 300 msg/s, 1.0 round trips and 4.0 WRU/msg; provider calls/msg 1.0 then 0.0 (200 messages at concurrency 16)',
    );
    expect(consumerLine('this consumer', side, undefined, { messages: 200, concurrency: 16 })).toContain(
      '(per CPU-second not measured)',
    );
  });

  it('print one provider setting of the batch comparison: each consumer with its CPU figures and what went wrong', () => {
    const side = (messagesPerSecond: number, roundTripsPerMessage: number) => ({
      messagesPerSecond,
      messagesPerCpuSecond: messagesPerSecond / 2,
      messagesPerProcessCpuSecond: messagesPerSecond,
      roundTripsPerMessage,
      failed: 0,
      double: 0,
      missing: 0,
    });

    const line = batchLine(
      'a 50 ms HTTP provider',
      { plain: side(200, 1), powertools: side(150, 3), ours: { ...side(180, 2), missing: 1 }, sequenced: side(190, 2) },
      { batchSize: 10, concurrency: 2, rounds: 3, messagesPerRound: 200 },
    );

    expect(line).toBe(
      "bench: batches of 10, 2 invocations at a time, 3 rounds of 200 messages each, provider a 50 ms HTTP provider: plain 200 msg/s (100 per CPU-second, 200 per CPU-second of the consumers' own process, 1 round trips/msg; 0 failed, 0 double, 0 missing); Powertools 150 msg/s (75 per CPU-second, 150 per CPU-second of the consumers' own process, 3 round trips/msg; 0 failed, 0 double, 0 missing); this consumer 180 msg/s (90 per CPU-second, 180 per CPU-second of the consumers' own process, 2 round trips/msg; 0 failed, 0 double, 1 missing); this consumer on the sequenced ledger 190 msg/s (95 per CPU-second, 190 per CPU-second of the consumers' own process, 2 round trips/msg; 0 failed, 0 double, 0 missing)",
    );
  });

  it('print the fault schedule and each side', () => {
    expect(
      faultLine({
        messages: 40,
        seed: 7,
        faults: { 'crash-before-ack': 1, 'crash-before-completion': 2, duplicate: 3, slow: 4 },
        sides: { ours: { deliveries: 52, crashes: 3, failures: 4, double: 0, missing: 0 } },
      }),
    ).toBe(
      'bench: faults (40 messages, seed 7): crash-before-ack 1, crash-before-completion 2, duplicate 3, slow 4; ours 0 double, 0 missing (52 deliveries, 3 crashes, 4 retried)',
    );
  });

  it('print a hop with what it waits on', () => {
    expect(hopLine('accepted -> relayed', { count: 10, p50: 1210, p99: 1480 }, 'relay batching window 1 s')).toBe(
      'bench: lag accepted -> relayed: p50 1210 ms, p99 1480 ms (10 events; relay batching window 1 s)',
    );
  });

  it('read utime + stime from a /proc stat line whose command holds spaces and parentheses', () => {
    const stat = '4242 (java (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 30 0 100 0 0';

    expect(parseProcStatTicks(stat)).toBe(1234 + 567);
    expect(perCpuSecond(100, 4)).toBe(25);
    expect(perCpuSecond(100, 0)).toBe(0);
    expect(perCpuSecond(100, undefined)).toBe(0);
  });
});

describe('bench consumer step model', () => {
  it('predicts the consumer ratio from the step rates: 1 transaction + 2 updates against 1 put + 3 updates', () => {
    // Put and update 10 ms each, transaction 40 ms: ours 40 + 20 = 60 ms, the peer's 10 + 30 = 40 ms.
    const rates = {
      concurrency: 16,
      conditionalPutPerSecond: 100,
      updatePerSecond: 100,
      twoItemTransactionPerSecond: 25,
    };

    const model = consumerStepModel(rates);

    expect(model.transactionInUpdates).toBeCloseTo(4);
    expect(model.expectedRatio).toBeCloseTo(40 / 60);
    expect(stepRatesLine(rates)).toBe(
      'bench: emulator requests/s at concurrency 16: conditional PutItem 100, UpdateItem 100, TransactWriteItems(2 items) 25; one transaction takes as long as 4.0 updates, so the consumer comparison is expected at 0.7x here (1 transaction + 2 updates against 1 put + 3 updates)',
    );
  });

  it('a transaction as cheap as an update predicts the round-trip ratio (4 against 3 steps)', () => {
    const model = consumerStepModel({
      concurrency: 16,
      conditionalPutPerSecond: 100,
      updatePerSecond: 100,
      twoItemTransactionPerSecond: 100,
    });

    expect(model.expectedRatio).toBeCloseTo(4 / 3);
  });
});

describe('bench default-plan units by table', () => {
  it("divides each table's units between two snapshots by the orders, labelled, leaving out tables with none", () => {
    const before = {
      dynamodbByTable: { 'orders-x': { writeUnits: 10, readUnits: 2 }, 'idle-x': { writeUnits: 5, readUnits: 0 } },
    };
    const after = {
      dynamodbByTable: {
        'orders-x': { writeUnits: 70, readUnits: 8 },
        'idle-x': { writeUnits: 5, readUnits: 0 },
        'effects-x': { writeUnits: 140, readUnits: 0 },
      },
    };

    const units = unitsPerOrderByTable(before, after, 10, (t) => t.replace(/-x$/, ''));

    expect(units).toEqual({
      orders: { writeUnits: 6, readUnits: 0.6 },
      effects: { writeUnits: 14, readUnits: 0 },
    });
  });
});

describe('bench failures', () => {
  const none = { failed: 0, double: 0, missing: 0 };
  const clean = {
    faults: { ours: { double: 0, missing: 0 }, sequenced: { double: 0, missing: 0 } },
    pipelines: [{ name: 'pipeline', effectsMissing: 0, effectsOwed: 400, drained: true }],
    batches: [{ provider: 'a 50 ms HTTP provider', ours: none, sequenced: none }],
  };

  it('are none when every effect owed was applied once', () => {
    expect(benchFailures(clean)).toEqual([]);
  });

  it("name a pipeline whose domain's consumers left effects missing", () => {
    const failures = benchFailures({
      ...clean,
      pipelines: [{ name: 'pipeline', effectsMissing: 200, effectsOwed: 400, drained: true }],
    });

    expect(failures).toEqual([
      'bench: FAILED: pipeline: 200 of 400 effects missing after the drain (each consumer of the domain owes one per accepted entity, counted from its inbox claims)',
    ]);
  });

  it('say so when the effects were still missing because the drain timed out', () => {
    const failures = benchFailures({
      ...clean,
      pipelines: [{ name: 'hot-resource pipeline', effectsMissing: 30, effectsOwed: 400, drained: false }],
    });

    expect(failures).toEqual([
      'bench: FAILED: hot-resource pipeline: 30 of 400 effects missing when the drain timed out (messages still queued) (each consumer of the domain owes one per accepted entity, counted from its inbox claims)',
    ]);
  });

  it('name this consumer in batches when a record failed or a message was applied twice or never', () => {
    const failures = benchFailures({
      ...clean,
      batches: [{ provider: 'a DynamoDB-write provider', ours: { failed: 1, double: 0, missing: 1 }, sequenced: none }],
    });

    expect(failures).toEqual([
      'bench: FAILED: this consumer in batches with a DynamoDB-write provider: 1 records failed, 0 applied twice, 1 missing (each message once expected)',
    ]);
  });

  it('judge the consumer on the sequenced ledger as strictly, in batches and under faults', () => {
    const failures = benchFailures({
      ...clean,
      faults: { ...clean.faults, sequenced: { double: 1, missing: 0 } },
      batches: [{ provider: 'a 50 ms HTTP provider', ours: none, sequenced: { failed: 0, double: 2, missing: 0 } }],
    });

    expect(failures).toEqual([
      'bench: FAILED: this consumer on the sequenced ledger applied 1 messages twice and missed 0 under the fault schedule (exactly once expected)',
      'bench: FAILED: this consumer on the sequenced ledger in batches with a 50 ms HTTP provider: 0 records failed, 2 applied twice, 0 missing (each message once expected)',
    ]);
  });
});

describe('bench verdict', () => {
  it('passes only when this consumer applied every faulted message exactly once', () => {
    expect(faultVerdict({ double: 0, missing: 0 })).toBeUndefined();
    expect(faultVerdict({ double: 2, missing: 0 })).toBe(
      'bench: FAILED: this consumer applied 2 messages twice and missed 0 under the fault schedule (exactly once expected)',
    );
    expect(faultVerdict({ double: 0, missing: 1 })).toContain('missed 1');
  });
});
