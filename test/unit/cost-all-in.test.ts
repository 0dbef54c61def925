import * as fs from 'node:fs';
import * as path from 'node:path';
import { allInCost, type AllInInputs } from '@exactly-once/tools/bench/cost-model';
import { dynamoDbItemBytes, writeUnitsOf } from '@exactly-once/tools/bench/dynamodb-units';
import { SHOP_ALL_IN } from '../../tooling/shop/order-cost';

/** The all-in cost model's arithmetic, and the figures docs/cost.md prints from it. */

const BASE: AllInInputs = {
  ordersPerMonth: 1_000_000,
  apiRequestsPerOrder: 1,
  apiWriteUnits: 10,
  relayWriteUnits: 2,
  consumerWriteUnits: { effect: 5 },
  lambdaInvocationsPerOrder: 1,
  lambdaGbSecondsPerOrder: 0,
  sqsRequestsPerOrder: 0,
  appLogBytesPerOrder: 0,
  spanLogBytesPerOrder: 0,
  appLogLinesPerOrder: 0,
  deployedNameBytesPerLine: 0,
  spanSampleRate: 1,
  platformLogBytesPerInvocation: 0,
  accessLogBytesPerRequest: 0,
  logCompression: 0,
  logRetentionMonths: 0,
  xray: { entryPoints: [], reservoirPerSecond: 1, fixedRate: 0.05 },
  init: { coldStartsPerInvocation: 0, initMs: 0, memoryMb: 256 },
  storedBytesPerOrder: 0,
  fixedMonthly: {},
};
const line = (inputs: AllInInputs, item: string) =>
  allInCost(inputs).lines.find((l) => l.item.startsWith(item))?.dollarsPerMillion;

test('a write unit is a started KB: a transactional item over 1 KB costs 4 units, not 2; an empty item still 1', () => {
  expect(writeUnitsOf(1_130, { transactional: true })).toBe(4);
  expect(writeUnitsOf(1_024, { transactional: true })).toBe(2);
  expect(writeUnitsOf(1_025, { transactional: false })).toBe(2);
  expect(writeUnitsOf(0, { transactional: false })).toBe(1);
});

test("an item's size is its names and values as DynamoDB counts them", () => {
  expect(dynamoDbItemBytes({ pk: { S: 'ORDER#1' }, n: { N: '42' } })).toBe(2 + 7 + 1 + 2);
  expect(dynamoDbItemBytes({ m: { M: { a: { BOOL: true } } }, l: { L: [{ S: 'xy' }] } })).toBe(
    1 + 3 + 1 + 1 + 1 + (1 + 3 + 1 + 2),
  );
});

test("each part's write units are priced at $0.625 a million: a consumer's ledger going from 5 to 2 units saves $1.875 per million orders", () => {
  const before = allInCost(BASE);
  const after = allInCost({ ...BASE, consumerWriteUnits: { effect: 2 } });

  expect(line(BASE, 'DynamoDB writes: effect')).toBeCloseTo(3.125, 6);
  expect(before.cleanPathPerMillion - after.cleanPathPerMillion).toBeCloseTo(1.875, 6);
  expect(before.cleanPathPerMillion).toBeCloseTo(3.5 + 0.2 + (10 + 2 + 5) * 0.625, 6);
});

test('span sampling thins the span lines only: half the rate, half the span bytes; the other lines stay', () => {
  const logs = { ...BASE, appLogBytesPerOrder: (3 * 1024 ** 3) / 1e6, spanLogBytesPerOrder: (2 * 1024 ** 3) / 1e6 };

  expect(line(logs, 'CloudWatch Logs ingestion')).toBeCloseTo(1.5, 6); // 3 GB per million orders at $0.50
  expect(line({ ...logs, spanSampleRate: 0.5 }, 'CloudWatch Logs ingestion')).toBeCloseTo(1.0, 6);
});

test('X-Ray: a trace start sampled at 1/s and 5 % of the rest, past 100,000 free traces a month, at $5 a million', () => {
  const month = 730 * 3600;
  const xray = {
    ...BASE,
    xray: { entryPoints: [{ name: 'api', perSecond: 3 }], reservoirPerSecond: 1, fixedRate: 0.05 },
  };

  const traces = (1 + 2 * 0.05) * month;
  expect(line(xray, 'X-Ray')).toBeCloseTo((((traces - 100_000) / 1e6) * 5 * 1e6) / 1_000_000, 6);
});

test("fixed monthly items are spread over the month's orders and are not in the clean-path figure", () => {
  const fixed = { ...BASE, fixedMonthly: { alarms: { dollars: 4, basis: 'measured' as const, detail: '' } } };

  expect(line(fixed, 'alarms')).toBeCloseTo(4, 6);
  expect(
    allInCost({ ...fixed, ordersPerMonth: 4_000_000 }).allInPerMillion - allInCost(BASE).allInPerMillion,
  ).toBeCloseTo(1, 6);
  expect(allInCost(fixed).cleanPathPerMillion).toBe(allInCost(BASE).cleanPathPerMillion);
});

test("docs/cost.md gives the shop's clean-path and all-in figures as the model computes them from the measured order", () => {
  const cost = allInCost(SHOP_ALL_IN);
  const page = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'cost.md'), 'utf8');

  expect(page).toContain(`clean path **$${cost.cleanPathPerMillion.toFixed(2)} per million orders**`);
  expect(page).toContain(`all-in **$${cost.allInPerMillion.toFixed(2)} per million orders**`);
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const l of cost.lines)
    expect(page).toMatch(
      new RegExp(
        `\\|\\s*${escaped(l.item)}\\s*\\|\\s*${l.basis}\\s*\\|\\s*${escaped(l.dollarsPerMillion.toFixed(2))}\\s*\\|`,
      ),
    );
});
