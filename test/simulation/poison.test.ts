import { PROBE_SIMULATED_CONSUMERS } from '../exactly-once/fixtures/probe-simulation';
import { probeSimulationOptions, simulateProbe } from './probe-world';

/**
 * Error classification end to end: a malformed message is a permanent error,
 * copied to its queue's DLQ at once with its cause and acknowledged, instead of
 * burning the queue's receives until SQS moves it without one.
 */
test("malformed messages land in every consumer's DLQ at once with their cause, and every other invariant holds", async () => {
  const result = await simulateProbe(probeSimulationOptions({ seed: 3, intents: 100 }));

  expect(result.faults['poison-message']).toBe(2);
  expect(result.verification.violations).toEqual([]);
  // Each consumer on the list gets its copy of the poison, a standard one and a FIFO one.
  // (A standard queue may deliver one twice at once, after the redrive too: both copies are dead-lettered.)
  expect(result.verification.deadLetters).toEqual(
    PROBE_SIMULATED_CONSUMERS.map(({ name }) => ({
      queue: `${name} DLQ`,
      cause: 'poison (SchemaViolation)',
      count: expect.any(Number) as number,
      expected: true,
    })),
  );
  for (const { queue, count } of result.verification.deadLetters) expect([queue, count >= 2]).toEqual([queue, true]);
});
