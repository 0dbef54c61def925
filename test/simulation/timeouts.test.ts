import {
  ALL_GUARDS,
  DEFAULT_FAULTS,
  simulate,
  simulationOptions,
  type Guards,
} from '../../tooling/shop/simulation/world';

/**
 * Lambda timeouts: a call that hangs past the function's timeout gets the
 * function stopped. Its result is lost as on a crash, what it awaited never
 * completes from its view (the call itself may still land at the service),
 * and its messages come back after their visibility timeout. A relay stopped
 * so is a function error for its stream mapping.
 *
 * A consumer is not stopped so any more: its records' deadline (a margin
 * before the timeout) aborts the hung call, the record fails like a transient
 * error (its try counted, its backoff set) and the batch answers in time, so
 * its batch-mates are acked. (Only a call of the failure path itself, made
 * after the deadline with no signal of its own, can still hang the function
 * into its timeout: not in this schedule.) Without the deadline (guard
 * `recordDeadline`) the consumer is stopped as before.
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

async function timeoutRun(seed: number, orders: number, guards: Partial<Guards> = {}) {
  const result = await simulate(
    simulationOptions({
      seed,
      orders,
      faults: TIMEOUTS,
      guards: { ...ALL_GUARDS, ...guards },
      keepTrace: Number.MAX_SAFE_INTEGER,
    }),
  );
  const lines: Line[] = result.trace.map((line) => {
    const [, seconds, text] = /^\s*([\d.]+)s (.*)$/.exec(line)!;
    return { seconds: Number(seconds), text };
  });
  const matching = (pattern: RegExp) =>
    lines
      .map((line, index) => ({ index, match: pattern.exec(line.text) }))
      .filter((s) => s.match !== null)
      .map((s) => ({ name: s.match![1], index: s.index }));
  const stopped = (kind: string) => matching(new RegExp(`^FAULT timeout: (${kind}#\\d+) stopped`));
  return { result, lines, stopped, matching };
}

test('a consumer call that hangs is cut at its record deadline: no consumer is stopped by its timeout, the hung record fails with its backoff and comes back after it, its batch-mates are acked', async () => {
  const { result, lines, stopped, matching } = await timeoutRun(11, 60);

  expect(result.verification.violations).toEqual([]);
  expect(result.unexpectedErrors).toEqual([]);
  expect(stopped('(?:fulfilment|loyalty)')).toEqual([]);
  const deadlines = matching(/^record-deadline: ((?:fulfilment|loyalty)#\d+) deadline/);
  expect(deadlines.length).toBeGreaterThan(0);
  expect(result.consequences['record-deadline']).toBe(deadlines.length);
  let acked = 0;
  for (const { name, index } of deadlines) {
    const receivedAt = lines.findIndex((l) => l.text.startsWith(`${name} got `));
    const own = lines.slice(index + 1).filter((l) => l.text.startsWith(`${name} `));
    const answer = own.find((l) => / acked /.test(l.text))!;
    // The hung call is cut at once (a wait, the in-process retries' sleep, is not a call: it just ends).
    const cut = own.filter((l) => / cut: its signal aborted$/.test(l.text));
    expect(cut.length).toBeLessThanOrEqual(1);
    // What was cut may still land later, as a request sent before a timeout may; the rest is the failure path.
    if (/acked nothing \(crashed\)/.test(answer.text)) continue;
    const [, ackedHere, failed] = /acked (\d+), failed (\d+)$/.exec(answer.text)!.map(Number);
    expect(failed).toBeGreaterThan(0);
    expect(answer.seconds - lines[receivedAt].seconds).toBeLessThan(30);
    acked += ackedHere;
    // The hung record's try is backed off (a FIFO record behind it in its group is released at 0 s, untried)...
    const beforeAnswer = own.slice(0, own.indexOf(answer));
    const backoffs = beforeAnswer
      .map((l) => ({ l, m: /^\S+ ChangeMessageVisibility (\S+)#\d+ (\d+)s ok$/.exec(l.text) }))
      .filter((b) => b.m !== null && Number(b.m[2]) > 0);
    expect(backoffs.length).toBeGreaterThan(0);
    // ... and it is received again once its backoff has passed, not after the visibility timeout (6 x 30 s).
    for (const { l, m } of backoffs) {
      const again = lines.slice(index + 1).find((x) => / got /.test(x.text) && x.text.split(' ').includes(m![1]));
      expect(again).toBeDefined();
      expect(again!.seconds - l.seconds).toBeGreaterThanOrEqual(Number(m![2]));
      expect(again!.seconds - l.seconds).toBeLessThan(180);
    }
  }
  // Batch-mates of hung records were acked, not thrown away with the batch.
  expect(acked).toBeGreaterThan(0);
});

test('without the record deadline, a consumer stopped by its timeout applies no effect twice, runs no further, and its messages come back after their visibility timeout', async () => {
  const { result, lines, stopped } = await timeoutRun(11, 60, { recordDeadline: false });

  expect(result.verification.violations).toEqual([]);
  expect(result.unexpectedErrors).toEqual([]);
  expect(result.consequences['record-deadline']).toBeUndefined();
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

test('a provider call cut at its record deadline may still reach the provider: no other copy calls under its key while it may be in flight, so no overlap and no PICK after CANCEL_PICK', async () => {
  // Hangs ten times as often, SQS duplicates and producer resends as by default: copies of an event
  // retried soon after a cut call (a 1 s backoff) while what that call had sent is still on its way.
  const hangs = { ...DEFAULT_FAULTS, timeoutPerCall: 0.01 };
  for (const seed of [4, 6]) {
    const result = await simulate(
      simulationOptions({ seed, orders: 150, faults: hangs, keepTrace: Number.MAX_SAFE_INTEGER }),
    );
    const landedLate = result.trace.filter((l) =>
      /\.send \S+ landed after (its call was aborted|the function)/.test(l),
    );

    expect(landedLate.length).toBeGreaterThan(0);
    expect([seed, result.verification.violations]).toEqual([seed, []]);
  }
});
