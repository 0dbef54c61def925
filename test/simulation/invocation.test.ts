import { Invocation } from '@exactly-once/tools/simulation/world/invocation';
import { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { Scheduler } from '@exactly-once/tools/simulation/world/scheduler';

/**
 * A call given an AbortSignal (a record's deadline) behaves as an aborted HTTP
 * request: it rejects at once with an AbortError, what it had sent may still
 * land at the service, and aborted before it was sent it is never sent.
 */
const NO_FAULTS = { crashPerCall: 0, transactionConflict: 0, sqsSendFailure: 0, timeoutPerCall: 0 };

function invocation(seed = 1, timeoutSeconds?: number) {
  const scheduler = new Scheduler(seed);
  return {
    scheduler,
    invocation: new Invocation('f#1', scheduler, new MemoryDynamoDb(), new Map(), NO_FAULTS, timeoutSeconds),
  };
}

test('a pending call rejects with AbortError the moment its signal aborts, though the service it reached acted on it', async () => {
  const landed: number[] = [];
  const outcomes: string[] = [];
  for (let seed = 1; seed <= 20; seed++) {
    const { scheduler, invocation: f } = invocation(seed);
    const controller = new AbortController();
    // The service takes 10 s to answer: the call is still pending at the abort (1 s).
    const call = f.io('slow', () => landed.push(seed), { signal: controller.signal, answerAfterMs: () => 10_000 });
    call.then(
      () => outcomes.push('answered'),
      (error: Error) => outcomes.push(`${error.name} at ${scheduler.now}`),
    );
    scheduler.at(1_000, () => controller.abort());
    await scheduler.run();
  }

  expect(new Set(outcomes)).toEqual(new Set(['AbortError at 1000']));
  // It had reached the service (which acts on arrival, then answers 10 s later) before the abort.
  expect(landed).toHaveLength(20);
});

test('a call cut before it reached the service may still land after the abort (a coin toss), and one aborted before it was sent is never sent', async () => {
  let landedLate = 0;
  for (let seed = 1; seed <= 40; seed++) {
    const { scheduler, invocation: f } = invocation(seed);
    const controller = new AbortController();
    void f.io('sent', () => (landedLate += 1), { signal: controller.signal }).catch(() => undefined);
    controller.abort(); // before its latency (1 to 25 ms) has passed: in flight to the service
    let sentAfterAbort = false;
    const refused = await f
      .io('not sent', () => (sentAfterAbort = true), { signal: controller.signal })
      .then(
        () => 'answered',
        (error: Error) => error.name,
      );
    await scheduler.run();
    expect(refused).toBe('AbortError');
    expect(sentAfterAbort).toBe(false);
  }

  expect(landedLate).toBeGreaterThan(0);
  expect(landedLate).toBeLessThan(40);
});

test('the timer fires on the virtual clock unless cancelled, and counts a deadline that cut pending work', async () => {
  const { scheduler, invocation: f } = invocation(1, 30);
  const controller = new AbortController();
  const fired: number[] = [];
  f.timer(25_000, () => {
    fired.push(scheduler.now);
    controller.abort();
  });
  const cancel = f.timer(26_000, () => fired.push(-1));
  cancel();
  const outcome = f
    .run(() => f.io('hung', () => undefined, { signal: controller.signal, answerAfterMs: () => 60_000 }))
    .then(
      () => 'answered',
      (error: Error) => `${error.name} at ${scheduler.now}`,
    );
  await scheduler.run();

  expect(fired).toEqual([25_000]);
  expect(await outcome).toBe('AbortError at 25000');
  expect(scheduler.consequences['record-deadline']).toBe(1);
  // The function answered in time: Lambda never stopped it.
  expect(f.timedOut).toBe(false);
});
