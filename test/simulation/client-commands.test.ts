import { probeSimulationOptions, ProbeWorld } from './probe-world';
import { PROBE_SIMULATED_CONSUMERS } from '../exactly-once/fixtures/probe-simulation';

/**
 * A plug-in's command other than the create (the probe's undo) goes through one engine call
 * (`World.command`, api-clients.ts `sendCommand`): it is planned, traced and observed like the POST, a try
 * that got no answer or a 5xx is sent again, and the client hears the final status once.
 */
test('an undo that got no answer or a 5xx is sent again until answered; each undo is planned, observed and ends once', async () => {
  // Arrange: every client undoes its thing, and calls crash often enough that some undo gets no answer.
  const options = probeSimulationOptions({ seed: 3, intents: 60, cancelChance: 1, keepTrace: Number.MAX_SAFE_INTEGER });
  const world = new ProbeWorld(
    { ...options, faults: { ...options.faults, crashPerCall: 0.05 } },
    PROBE_SIMULATED_CONSUMERS,
  );

  // Act
  const result = await world.run();

  // Assert
  const tries = result.trace.filter((line) => / POST \/things\/[^/]+\/undo key=/.test(line));
  const answers = result.trace.filter((line) => / answered \S+ to undo of /.test(line));
  const retried = tries.filter((line) => !line.endsWith('(attempt 1)'));
  const undoneKeys = answers.filter((line) => / answered 200 /.test(line)).map((line) => line.split('key=')[1]);
  expect(tries.length).toBeGreaterThan(0);
  expect(retried.length).toBeGreaterThan(0);
  expect(answers).toHaveLength(tries.length);
  expect(new Set(undoneKeys).size).toBe(undoneKeys.length);
  expect(result.verification.violations).toEqual([]);
});
