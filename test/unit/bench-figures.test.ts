import { gbSecondsPerOrder, unitsByTable } from '../../bench/cost-model';
import {
  closingLines,
  consumerStepModel,
  perSecond,
  ratio,
  stepRatesLine,
  summarizeLatencies,
} from '../../bench/figures';
import { unitsPerOrderByTable } from '../../bench/cost-model';
import { describeMix, type RoundTrip } from '../../bench/round-trips';
import { costBreakdown, sqsBilledRequests, UNIT_PRICES } from '../../loadtest/prices';

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
      apiRequestsPerOrder: 1,
      lambdaInvocationsPerOrder: 4,
      lambdaGbSecondsPerOrder: 0.1,
      dynamoDb: { orders: { writeUnits: 6, readUnits: 0 }, effects: { writeUnits: 12, readUnits: 2 } },
      sqsRequestsPerOrder: 3,
    });

    const dollars = Object.fromEntries(cost.components.map((c) => [c.component, c.dollarsPerMillionOrders]));
    expect(dollars['API Gateway REST requests']).toBeCloseTo(3.5, 10);
    expect(dollars['Lambda requests']).toBeCloseTo(0.8, 10);
    expect(dollars['Lambda duration (GB-s, arm64)']).toBeCloseTo(0.1 * 1_000_000 * UNIT_PRICES.lambdaArmGbSecond, 10);
    expect(dollars['DynamoDB orders WRU']).toBeCloseTo(3.75, 10);
    expect(dollars['DynamoDB effects WRU']).toBeCloseTo(7.5, 10);
    expect(dollars['DynamoDB effects RRU']).toBeCloseTo(0.25, 10);
    expect(dollars['DynamoDB orders RRU']).toBeUndefined(); // no reads: no line
    expect(dollars['SQS requests (64 KB chunks)']).toBeCloseTo(1.5, 10);
    expect(cost.totalPerMillionOrders).toBeCloseTo(3.5 + 0.8 + 1.33334 + 3.75 + 7.5 + 0.25 + 1.5, 4);
  });

  it('leaves Lambda duration out when it was not measured', () => {
    const cost = costBreakdown({
      apiRequestsPerOrder: 1,
      lambdaInvocationsPerOrder: 1,
      dynamoDb: {},
      sqsRequestsPerOrder: 0,
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

describe('bench closing lines', () => {
  it('print exactly the four agreed lines', () => {
    const lines = closingLines({
      pipelineOrdersPerSecond: 41.2,
      emulatorLimitOrdersPerSecond: 72,
      consumerMessagesPerSecond: 412,
      peerMessagesPerSecond: 179,
      consumerRoundTripsPerMessage: 1,
      peerRoundTripsPerMessage: 3,
      apiReplayP50Ms: 11,
      apiFirstRequestP50Ms: 27,
      cleanPathCostPerMillion: 13.2,
      defaultPlanCostPerMillion: 19.4,
    });

    expect(lines).toEqual([
      'bench: pipeline 41.2 orders/s = 57% of the emulator limit (72.0 orders/s)',
      'bench: consumer 2.3x a Powertools-idempotency consumer (412 vs 179 msg/s); round trips per message 1 vs 3',
      'bench: api replay p50 0.41x first-request p50 (11 vs 27 ms)',
      'bench: cost $13.20 per million orders (clean path), $19.40 (default plan)',
    ]);
  });

  it('round the pipeline share to the nearest percent and print fractional round trips with one decimal', () => {
    const [pipeline, consumer] = closingLines({
      pipelineOrdersPerSecond: 2,
      emulatorLimitOrdersPerSecond: 3,
      consumerMessagesPerSecond: 10,
      peerMessagesPerSecond: 5,
      consumerRoundTripsPerMessage: 1.25,
      peerRoundTripsPerMessage: 3,
      apiReplayP50Ms: 1,
      apiFirstRequestP50Ms: 2,
      cleanPathCostPerMillion: 1,
      defaultPlanCostPerMillion: 1,
    });

    expect(pipeline).toBe('bench: pipeline 2.0 orders/s = 67% of the emulator limit (3.0 orders/s)');
    expect(consumer).toBe(
      'bench: consumer 2.0x a Powertools-idempotency consumer (10 vs 5 msg/s); round trips per message 1.3 vs 3',
    );
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
