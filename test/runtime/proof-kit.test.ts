import { ALL_FAULTS } from '@exactly-once/tools/proof-kit/faults';
import { useProofKitRuntime } from './proof-kit-fixture';
import { describeFaultGroup, FAULT_GROUPS } from './proof-kit-groups';

/**
 * The proof kit's fault matrix on the local runtime, at small scale, on the probe app (the neutral
 * fixture's stack: things made by POST /things, some undone by POST /things/{thingId}/undo, taken by
 * a standard, a FIFO and a stateful consumer), so it runs with the example deleted: the faults in
 * two groups (each fault's own evidence asserted; proof-kit-groups.ts), every run verified against the
 * invariants of docs/proof-kit.md. Both groups run on one runtime: a runtime per group would be more
 * work for the same cores, not less time. The adversarial faults and the proof that the kit can fail:
 * proof-kit-adversarial.test.ts; all faults at once, on the example: proof-kit-all-faults.test.ts;
 * long outages: outages.test.ts.
 */
const { run } = useProofKitRuntime('proof-kit', 'probe');

test('the fault groups cover every fault, each once', () => {
  const grouped = FAULT_GROUPS.flatMap((g) => g.faults);

  expect([...grouped].sort()).toEqual([...ALL_FAULTS].sort());
});

// The faults inside the consumers, then the faults around them.
for (const group of FAULT_GROUPS) describeFaultGroup(run, group);
