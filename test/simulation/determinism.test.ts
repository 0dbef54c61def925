import { probeSimulationOptions, simulateProbe } from './probe-world';

/** A seed is a schedule: the same seed replays the same trace, event for event; another seed explores another one. */
test('the same seed replays an identical trace; a different seed gives a different one', async () => {
  const first = await simulateProbe(probeSimulationOptions({ seed: 42, intents: 60 }));
  const again = await simulateProbe(probeSimulationOptions({ seed: 42, intents: 60 }));
  const other = await simulateProbe(probeSimulationOptions({ seed: 43, intents: 60 }));

  expect(again.traceHash).toBe(first.traceHash);
  expect(again.events).toBe(first.events);
  expect(again.verification).toEqual(first.verification);
  expect(other.traceHash).not.toBe(first.traceHash);
});
