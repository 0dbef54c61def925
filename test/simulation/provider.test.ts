import { SimProviders } from '@exactly-once/tools/simulation/world/provider';
import { Scheduler } from '@exactly-once/tools/simulation/world/scheduler';

/** The simulated provider dedupes on the key only for its memory window, and refuses calls while it is down. */
const DAY_MS = 24 * 3600 * 1000;

function providers() {
  const scheduler = new Scheduler(1);
  return { scheduler, providers: new SimProviders(scheduler, { memorySeconds: 24 * 3600, failureChance: 0 }) };
}

test('a key called again within 24 h is one effect; called after 24 h it is a second effect', async () => {
  const { scheduler, providers: p } = providers();
  p.call('mail', 'loyalty:e1', {});
  scheduler.at(DAY_MS - 1, () => p.call('mail', 'loyalty:e1', {}));
  await scheduler.run();
  const within = { ...p.log.get('loyalty:e1') };
  scheduler.at(DAY_MS, () => p.call('mail', 'loyalty:e1', {}));
  await scheduler.run();

  expect([within.calls, within.effects]).toEqual([2, 1]);
  expect([p.log.get('loyalty:e1')?.calls, p.log.get('loyalty:e1')?.effects]).toEqual([3, 2]);
});

test('during an outage every call to that provider is refused and nothing is recorded; the other provider answers', () => {
  const { providers: p } = providers();
  p.outages.push({ provider: 'warehouse', start: 0, end: 1_000 });

  expect(() => p.call('warehouse', 'fulfilment:e1', {})).toThrow('warehouse unavailable');
  expect(p.items()).toEqual([]);
  p.call('mail', 'loyalty:e1', {});
  expect(p.items().map((i) => i.idempotencyKey)).toEqual(['loyalty:e1']);
});

test('a call is in flight from its arrival until its answer: calls under one key in flight at once are counted, calls one after another are not', async () => {
  const scheduler = new Scheduler(1);
  const p = new SimProviders(scheduler, { memorySeconds: 24 * 3600, failureChance: 0, answerMs: [100, 100] });
  const answers: number[] = [];
  answers.push(p.call('mail', 'loyalty:e1', {}));
  scheduler.at(50, () => p.call('mail', 'loyalty:e1', {})); // while the first is in flight
  scheduler.at(60, () => p.call('mail', 'loyalty:e1', {})); // three at once
  scheduler.at(500, () => p.call('mail', 'loyalty:e2', {}));
  scheduler.at(700, () => p.call('mail', 'loyalty:e2', {})); // the first was answered at 600
  await scheduler.run();

  expect(answers).toEqual([100]);
  expect(p.overlaps()).toEqual([{ idempotencyKey: 'loyalty:e1', maxInFlight: 3, pairs: 3 }]);
});
