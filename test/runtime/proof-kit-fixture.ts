import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LocalRuntime } from '@exactly-once/tools/local-runtime/runtime';
import type { FaultName, FaultSettings } from '@exactly-once/tools/proof-kit/faults';
import { faultMarks } from '@exactly-once/tools/proof-kit/fault-marks';
import { localCallCounters } from '@exactly-once/tools/proof-kit/local-counters';
import type { RunResults } from '@exactly-once/tools/proof-kit/report';
import { runLoadTest, type Profile } from '@exactly-once/tools/proof-kit/run';
import { localTarget, type Target } from '@exactly-once/tools/proof-kit/target';
import { capturingLogger, startProbeStack, startSynthesizedStack } from './fixtures';
import { exampleDomain } from '../support/example-domain';
import { tooling as probeTooling } from '../support/probe-tooling';

/** The proof kit's runs at small scale: 20 entities (the shop's orders from 4 customers on 4 SKUs; the probe's things of 4 owners). */
export const SMALL: Profile = { intents: 20, connections: 4, parties: 4, resources: 4, drainTimeoutMs: 300_000 };

/** Every planned create gets its 201 unless the machine drops a connection: a run far below this proves little. */
export const MIN_ORDERS_PER_RUN = Math.ceil(SMALL.intents * 0.9);

export const totalSuppressed = (r: RunResults) =>
  Object.values(r.verification.duplicatesSuppressed).reduce((a, b) => a + b, 0);

/** The DLQ copies the redrive fault seeds (packages/tools/src/proof-kit/run.ts): at least two, one per ten things. */
export const SEEDED_DEAD_LETTERS = Math.max(2, Math.ceil(SMALL.intents / 10));

/**
 * Each fault left its mark, as the kit counts it for the report (packages/tools/src/proof-kit/fault-marks.ts: the
 * host's, the provider's, the kit's or the verdict's count), with what the mark must also say for some.
 * A fault shares a run only with faults that cannot leave the same mark (the groups of proof-kit.test.ts), so each mark
 * is proof that its own fault fired.
 */
export function expectOwnMark(r: RunResults, fault: FaultName): void {
  const marks = faultMarks(r);
  expect({ fault, marks: marks[fault] }).toEqual({ fault, marks: expect.any(Number) });
  expect(marks[fault]).toBeGreaterThan(0);
  if (fault === 'poison')
    expect(r.verification.deadLetters).toEqual(
      expect.arrayContaining([expect.objectContaining({ cause: 'poison (SchemaViolation)', count: 2 })]),
    );
  // The seeded copies came back from the DLQs to their sources.
  if (fault === 'redrive') expect(r.injected.redriven).toBeGreaterThanOrEqual(SEEDED_DEAD_LETTERS);
  // The forged copy was applied in the real event's place, and the real one was dead-lettered as EventIdReused.
  if (fault === 'forged-first') expect(marks['reused-id']).toBeGreaterThan(0);
  // The provider forgot the keys it had answered before the redrive, and the redrive still sent nothing twice.
  if (fault === 'keys-forgotten') expect(marks['keys-forgotten']).toBe(r.injected.providerKeysForgotten);
}

/**
 * A test file's own local runtime on a synthesized stack, with its fault switch and a
 * proof-kit target, started before its tests and stopped after; `run` is one proof run on it
 * (faults at `rate`, 0.3 unless given, the local visibility shortened to 3 s and the backoff capped at 4 s). `stack`: the example's
 * (startSynthesizedStack), or the probe app with the probe tooling handed to the tools (startProbeStack),
 * where the mechanism's proofs run with the example deleted.
 */
export function useProofKitRuntime(name: string, stack: 'example' | 'probe' = 'example') {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  const runtimeLog = capturingLogger();
  let runtime: LocalRuntime | undefined;
  let target: Target | undefined;

  beforeAll(async () => {
    runtime = await (stack === 'probe' ? startProbeStack : startSynthesizedStack)({
      work,
      log: runtimeLog.log,
      outputsFile: path.join(work, 'outputs.json'),
      faultInjectionFile: path.join(work, 'faults.json'),
    });
    target = localTarget({
      domain: stack === 'probe' ? probeTooling : exampleDomain(),
      outputsFile: path.join(work, 'outputs.json'),
      faultsFile: path.join(work, 'faults.json'),
    });
  }, 240_000);

  afterAll(async () => {
    target?.close();
    await runtime?.stop();
  });

  return {
    work,
    runtimeLog,
    target: () => target!,
    run(
      faults: FaultName[],
      seed: number,
      options: { disableInboxClaim?: string[]; rate?: number; rates?: FaultSettings['rates'] } = {},
    ): Promise<RunResults> {
      const { disableInboxClaim, rate = 0.3, rates } = options;
      return runLoadTest({
        target: target!,
        profileName: 'test',
        profile: SMALL,
        seed,
        faults: {
          enabled: faults,
          rate,
          rates,
          slowSeconds: 4,
          poisonPerQueue: 2,
          disableInboxClaim,
          localVisibilitySeconds: 3,
          localBackoffCapSeconds: 4,
        },
        callCounters: localCallCounters(target!),
      });
    },
  };
}
