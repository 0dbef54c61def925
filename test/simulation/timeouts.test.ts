import { DEFAULT_FAULTS, simulate, simulationOptions } from './world/world';

/**
 * Lambda timeouts: a call that hangs past the function's timeout gets the
 * function stopped. Its result is lost as on a crash, what it awaited never
 * completes from its view (the call itself may still land at the service),
 * and its messages come back after their visibility timeout. A relay stopped
 * so is a function error for its stream mapping.
 */
const TIMEOUTS = {
  ...DEFAULT_FAULTS,
  timeoutPerCall: 0.01,
  // No SQS duplicates: a message seen again is the visibility timeout's doing, not a duplicate delivery.
  sqsDuplicate: 0,
};

interface Line {
  seconds: number;
  text: string;
}

async function timeoutRun(seed: number, orders: number) {
  const result = await simulate(
    simulationOptions({ seed, orders, faults: TIMEOUTS, keepTrace: Number.MAX_SAFE_INTEGER }),
  );
  const lines: Line[] = result.trace.map((line) => {
    const [, seconds, text] = /^\s*([\d.]+)s (.*)$/.exec(line)!;
    return { seconds: Number(seconds), text };
  });
  const stopped = (kind: string) =>
    lines
      .map((line, index) => ({ index, match: new RegExp(`^FAULT timeout: (${kind}#\\d+) stopped`).exec(line.text) }))
      .filter((s) => s.match !== null)
      .map((s) => ({ name: s.match![1], index: s.index }));
  return { result, lines, stopped };
}

test('a consumer stopped by its timeout applies no effect twice, runs no further, and its messages come back after their visibility timeout', async () => {
  const { result, lines, stopped } = await timeoutRun(11, 60);

  expect(result.verification.violations).toEqual([]);
  expect(result.unexpectedErrors).toEqual([]);
  const consumers = stopped('(?:fulfilment|loyalty)');
  expect(consumers.length).toBeGreaterThan(0);
  for (const { name, index } of consumers) {
    const receivedAt = lines.findIndex((l) => l.text.startsWith(`${name} got `));
    const messageIds = lines[receivedAt].text.split(' ').slice(2);
    // Stopped: after its timeout the function itself does nothing (Lambda reports the timeout); only a call it had sent may still land.
    const after = lines.slice(index + 1).filter((l) => l.text.startsWith(`${name} `));
    for (const line of after)
      expect(line.text).toMatch(
        /landed after the function timed out|invocation failed: FunctionTimeout|acked nothing \(timed out\)/,
      );
    expect(after.some((l) => l.text === `${name} acked nothing (timed out)`)).toBe(true);
    // Every message it held is received again: once its visibility timeout (6 x 30 s) ran out, or the backoff
    // the function had set on it before it was stopped; unless a call that landed late settled it.
    const own = lines.slice(receivedAt + 1).filter((l) => l.text.startsWith(`${name} `));
    for (const id of messageIds) {
      const again = lines.slice(receivedAt + 1).find((l) => / got /.test(l.text) && l.text.split(' ').includes(id));
      if (after.some((l) => l.text.includes(`${id}#`))) continue;
      expect(again).toBeDefined();
      if (!own.some((l) => l.text.includes(`ChangeMessageVisibility ${id}#`)))
        expect(again!.seconds - lines[receivedAt].seconds).toBeGreaterThanOrEqual(180);
    }
  }
});

test('a relay stopped by its timeout is a function error: its batch is bisected or retried, and every outbox item is still relayed', async () => {
  const { result, lines, stopped } = await timeoutRun(13, 150);

  expect(result.verification.violations).toEqual([]);
  const relays = stopped('relay');
  const sizes = relays.map(({ name, index }) => {
    const got = lines.find((l) => l.text.startsWith(`${name} got `))!;
    const size = Number(/got (\d+) stream records/.exec(got.text)![1]);
    const next = lines.slice(index + 1).find((l) => /got \d+ stream records|stream-bisect/.test(l.text))!;
    // The mapping's next move on this shard: a batch of several is halved; a batch of one is tried again.
    expect(next.text).toMatch(size > 1 ? new RegExp(`^stream-bisect: ${size} records`) : /got 1 stream records/);
    return size;
  });
  expect(sizes.some((size) => size > 1)).toBe(true);
});
