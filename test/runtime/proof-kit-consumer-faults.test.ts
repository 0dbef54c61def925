import '../support/probe-tooling-env';
import { useProofKitRuntime } from './proof-kit-fixture';
import { describeFaultGroup, FAULT_GROUPS } from './proof-kit-groups';

/**
 * The proof kit's faults inside the consumers (crash, slow, transient) in one run on the local runtime,
 * at small scale, on the probe app, each fault's own evidence asserted: the first group of the fault
 * matrix (proof-kit-groups.ts), on a runtime of its own so it runs beside proof-kit.test.ts.
 */
const { run } = useProofKitRuntime('proof-kit-consumer-faults', 'probe');

describeFaultGroup(run, FAULT_GROUPS[0]);
