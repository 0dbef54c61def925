import { DEFAULT_FAULTS, MECHANISM_GUARDS, type MechanismGuards } from '@exactly-once/tools/simulation/world/world';
import { PROBE_SIMULATED_CONSUMERS } from '../exactly-once/fixtures/probe-simulation';
import { probeSimulationOptions, simulateProbe } from './probe-world';

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
 *
 * The world is the neutral probe domain (packages/tools/src/simulation's engine with the probe consumers).
 */
const TIMEOUTS = {
  ...DEFAULT_FAULTS,
  timeoutPerCall: 0.01,
  // No SQS duplicates: a message seen again is the visibility timeout's doing, not a duplicate delivery.
  sqsDuplicate: 0,
};

/** Every consumer on the list, as a pattern over invocation names (`<consumer>#<n>`): names hold nothing special. */
const ANY_CONSUMER = `(?:${PROBE_SIMULATED_CONSUMERS.map((c) => c.name).join('|')})`;
/**
 * How many schedules a test may try, from its first seed on, before it gives up finding the case it is
 * about. A seed's trace depends on the consumer list (each consumer draws from the same random stream),
 * so another list moves the case to another seed; each test checks
 * its property on every schedule it runs, and needs the case at least once.
 */
const MAX_SEEDS = 6;

interface Line {
  seconds: number;
  text: string;
}

async function timeoutRun(seed: number, intents: number, guards: Partial<MechanismGuards> = {}) {
  const result = await simulateProbe(
    probeSimulationOptions({
      seed,
      intents,
      faults: TIMEOUTS,
      guards: { ...MECHANISM_GUARDS, ...guards },
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
  let acked = 0;
  for (let seed = 11; seed < 11 + MAX_SEEDS && acked === 0; seed++)
    acked += await recordDeadlinesHold(await timeoutRun(seed, 60));

  // Batch-mates of hung records were acked, not thrown away with the batch.
  expect(acked).toBeGreaterThan(0);
});

/** The record deadline's properties on one schedule; how many batch-mates of hung records it acked. */
async function recordDeadlinesHold({ result, lines, stopped, matching }: Awaited<ReturnType<typeof timeoutRun>>) {
  expect(result.verification.violations).toEqual([]);
  expect(result.unexpectedErrors).toEqual([]);
  expect(stopped(ANY_CONSUMER)).toEqual([]);
  const deadlines = matching(new RegExp(`^record-deadline: (${ANY_CONSUMER}#\\d+) deadline`));
  expect(result.consequences['record-deadline'] ?? 0).toBe(deadlines.length);
  let acked = 0;
  for (const { name, index } of deadlines) {
    const receivedAt = lines.findIndex((l) => l.text.startsWith(`${name} got `));
    const own = lines.slice(index + 1).filter((l) => l.text.startsWith(`${name} `));
    const answer = own.find((l) => / acked /.test(l.text))!;
    // The hung calls are cut at once (a wait, the in-process retries' sleep, is not a call: it just ends):
    // no more than were pending at the deadline (a standard queue's records run side by side, so several may be).
    const pending = Number(/with (\d+) calls or waits pending/.exec(lines[index].text)![1]);
    const cut = own.filter((l) => / cut: its signal aborted$/.test(l.text));
    expect(cut.length).toBeLessThanOrEqual(pending);
    // What was cut may still land later, as a request sent before a timeout may; the rest is the failure path.
    if (/acked nothing \(crashed\)/.test(answer.text)) continue;
    const [, ackedHere, failed] = /acked (\d+), failed (\d+)$/.exec(answer.text)!.map(Number);
    expect(failed).toBeGreaterThan(0);
    expect(answer.seconds - lines[receivedAt].seconds).toBeLessThan(30);
    acked += ackedHere;
    // The hung record's try is backed off (a FIFO record behind it in its group is released at 0 s, untried).
    // A call cut at the record deadline fails its record before the answer; a done-mark, which runs to the
    // answer's own bound, fails it as the batch answers, and its backoff lands just after the answer.
    const backoffs = own
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
  return acked;
}

test('without the record deadline, a consumer stopped by its timeout applies no effect twice, runs no further, and its messages come back after their visibility timeout', async () => {
  let stoppedConsumers = 0;
  for (let seed = 11; seed < 11 + MAX_SEEDS && stoppedConsumers === 0; seed++)
    stoppedConsumers += stoppedConsumersHold(await timeoutRun(seed, 60, { recordDeadline: false }));

  expect(stoppedConsumers).toBeGreaterThan(0);
});

/** What a consumer stopped by its timeout does and leaves, on one schedule; how many were stopped. */
function stoppedConsumersHold({ result, lines, stopped }: Awaited<ReturnType<typeof timeoutRun>>): number {
  expect(result.verification.violations).toEqual([]);
  expect(result.unexpectedErrors).toEqual([]);
  expect(result.consequences['record-deadline']).toBeUndefined();
  const consumers = stopped(ANY_CONSUMER);
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
  return consumers.length;
}

test('a relay stopped by its timeout is a function error: its batch is bisected or retried, and every outbox item is still relayed', async () => {
  const sizes: number[] = [];
  for (let seed = 13; seed < 13 + MAX_SEEDS && !sizes.some((size) => size > 1); seed++)
    sizes.push(...stoppedRelaysHold(await timeoutRun(seed, 150)));

  // A stopped batch of several records was among them: the case bisection is for.
  expect(sizes.some((size) => size > 1)).toBe(true);
});

/** What the stream mapping does after each relay stopped by its timeout, on one schedule; their batch sizes. */
function stoppedRelaysHold({ result, lines, stopped }: Awaited<ReturnType<typeof timeoutRun>>): number[] {
  expect(result.verification.violations).toEqual([]);
  const relays = stopped('relay');
  return relays.map(({ name, index }) => {
    const got = lines.find((l) => l.text.startsWith(`${name} got `))!;
    const size = Number(/got (\d+) stream records/.exec(got.text)![1]);
    const next = lines.slice(index + 1).find((l) => /got \d+ stream records|stream-bisect/.test(l.text))!;
    // The mapping's next move on this shard: a batch of several is halved; a batch of one is tried again.
    expect(next.text).toMatch(size > 1 ? new RegExp(`^stream-bisect: ${size} records`) : /got 1 stream records/);
    return size;
  });
}

test('a provider call cut at its record deadline may still reach the provider: no other copy calls under its key while it may be in flight, so no overlap and no send after a heard answer', async () => {
  // Hangs ten times as often, SQS duplicates and producer resends as by default: copies of an event
  // retried soon after a cut call (a 1 s backoff) while what that call had sent is still on its way.
  const hangs = { ...DEFAULT_FAULTS, timeoutPerCall: 0.01 };
  const schedulesWithLateCalls: number[] = [];
  for (let seed = 4; seed < 4 + MAX_SEEDS && schedulesWithLateCalls.length < 2; seed++) {
    const result = await simulateProbe(
      probeSimulationOptions({ seed, intents: 150, faults: hangs, keepTrace: Number.MAX_SAFE_INTEGER }),
    );
    const landedLate = result.trace.filter((l) =>
      /\.send \S+ landed after (its call was aborted|the function)/.test(l),
    );

    expect([seed, result.verification.violations]).toEqual([seed, []]);
    if (landedLate.length > 0) schedulesWithLateCalls.push(seed);
  }

  // Two schedules where a cut call landed late, so the property was tested where it matters.
  expect(schedulesWithLateCalls).toHaveLength(2);
});
