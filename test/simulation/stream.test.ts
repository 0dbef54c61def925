import { Scheduler } from '@exactly-once/tools/simulation/world/scheduler';
import {
  StreamMapping,
  type BatchOutcome,
  type OnFailureReason,
  type StreamMappingSettings,
} from '@exactly-once/tools/simulation/world/stream';

/**
 * The relay's stream event source mapping on its own, driven by a scripted
 * function: what Lambda does with a batch when the invocation fails as a whole
 * (bisect, then retry attempts, then the on-failure destination), when it
 * reports a partial failure, and when a record outlives the maximum record age.
 */
interface Record {
  sequenceNumber: string;
  at: number;
  n: number;
}

const SETTINGS: StreamMappingSettings = {
  shards: 1,
  batchSize: 100,
  retryAttempts: 8,
  maxRecordAgeSeconds: 6 * 3600,
  bisectOnFunctionError: true,
  redeliveryChance: 0,
};

function harness(settings: StreamMappingSettings, invoke: (batch: Record[], now: number) => BatchOutcome) {
  const scheduler = new Scheduler(1);
  const batches: string[] = [];
  const relayed: number[] = [];
  const onFailure: { records: number[]; reason: OnFailureReason }[] = [];
  const stream = new StreamMapping<Record>(
    scheduler,
    settings,
    (batch) => {
      const ns = batch.map((r) => r.n);
      batches.push(ns.length === 1 ? `${ns[0]}` : `${ns[0]}-${ns[ns.length - 1]}`);
      const outcome = invoke(batch, scheduler.now);
      if (outcome.kind === 'response') relayed.push(...ns.slice(0, outcome.failedFrom));
      return Promise.resolve(outcome);
    },
    (records, reason) => onFailure.push({ records: records.map((r) => r.n), reason }),
  );
  const insert = (n: number) => stream.insert(0, { sequenceNumber: stream.nextSequenceNumber(), at: scheduler.now, n });
  return { scheduler, stream, batches, relayed, onFailure, insert };
}

const ok = (batch: Record[]): BatchOutcome => ({ kind: 'response', failedFrom: batch.length });

test('a relay that fails as a whole on a poison record: the batch is halved until the record is alone, which alone spends the retries and goes to the on-failure queue', async () => {
  const poison = 7;
  const world = harness(SETTINGS, (batch) =>
    batch.some((r) => r.n === poison) ? { kind: 'function-error' } : ok(batch),
  );
  for (let n = 1; n <= 10; n++) world.insert(n);

  world.stream.start();
  await world.scheduler.run();

  // Splitting spends no retry attempt: record 7 alone is tried once and retried 8 times.
  expect(world.batches).toEqual(['1-10', '1-5', '6-10', '6-8', '6-7', '6', ...Array(9).fill('7'), '8', '9-10']);
  expect(world.onFailure).toEqual([{ records: [poison], reason: 'retries-exhausted' }]);
  expect(world.relayed.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 8, 9, 10]);
  expect(world.scheduler.consequences).toEqual({ 'stream-bisect': 4, 'stream-retries-exhausted': 1 });
  expect(world.stream.backlog()).toEqual([0]);
});

test('splitting spends no retry attempt: a poison first record, halved to alone without a success between, is still tried 1 + retryAttempts times', async () => {
  const world = harness(SETTINGS, (batch) => (batch[0].n === 1 ? { kind: 'function-error' } : ok(batch)));
  for (let n = 1; n <= 10; n++) world.insert(n);

  world.stream.start();
  await world.scheduler.run();

  expect(world.batches).toEqual(['1-10', '1-5', '1-3', '1-2', ...Array(9).fill('1'), '2', '3', '4-5', '6-10']);
  expect(world.onFailure).toEqual([{ records: [1], reason: 'retries-exhausted' }]);
});

test('a partial batch response is retried from the first reported record only, as one retry attempt', async () => {
  let failures = 0;
  const world = harness({ ...SETTINGS, retryAttempts: 1 }, (batch) => {
    const at = batch.findIndex((r) => r.n === 4);
    if (at === -1 || failures >= 1) return ok(batch);
    failures += 1;
    return { kind: 'response', failedFrom: at };
  });
  for (let n = 1; n <= 10; n++) world.insert(n);

  world.stream.start();
  await world.scheduler.run();

  expect(world.batches).toEqual(['1-10', '4-10']);
  expect(world.relayed.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  expect(world.onFailure).toEqual([]);
});

test('records older than the maximum record age when read go to the on-failure queue unprocessed; younger ones are relayed', async () => {
  // The relay fails as a whole for its first two minutes (a broken deploy, say); the mapping retries without end.
  const world = harness({ ...SETTINGS, maxRecordAgeSeconds: 60, retryAttempts: 10_000 }, (batch, now) =>
    now < 120_000 ? { kind: 'function-error' } : ok(batch),
  );
  for (let n = 1; n <= 3; n++) world.insert(n);
  world.scheduler.at(100_000, () => [4, 5, 6].forEach(world.insert));

  world.stream.start();
  await world.scheduler.run();

  expect(world.onFailure).toEqual([{ records: [1, 2, 3], reason: 'record-age' }]);
  expect(world.relayed.sort((a, b) => a - b)).toEqual([4, 5, 6]);
  expect(world.scheduler.consequences['stream-record-age']).toBe(1);
});
