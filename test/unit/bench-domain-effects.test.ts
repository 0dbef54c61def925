import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { effectAppliedAt } from '@exactly-once/tools/bench/effects';
import { reportBench, type BenchResults } from '@exactly-once/tools/bench/run';

/**
 * The bench measures the domain it is given: an effect is counted from the consumer's own inbox claim
 * (its effect commits with it), whether or not the consumer calls a provider, and a run in which an
 * owed effect is missing ends with a FAILED line and exit status 1.
 */
afterEach(() => jest.restoreAllMocks());

describe('an effect counted from its inbox claim', () => {
  const claimed = '2026-01-01T00:00:00.000Z';
  const done = '2026-01-01T00:00:00.050Z';

  it('of a consumer that names no provider: applied when the claim committed, with no provider call', () => {
    expect(effectAppliedAt({}, { claimedAt: claimed })).toBe(Date.parse(claimed));
    expect(effectAppliedAt({ providers: [] }, { claimedAt: claimed })).toBe(Date.parse(claimed));
  });

  it('of a consumer that names a provider: applied once the provider accepted the call (the done-mark)', () => {
    expect(effectAppliedAt({ providers: ['mail'] }, { claimedAt: claimed, providerCallDoneAt: done })).toBe(
      Date.parse(done),
    );
    expect(effectAppliedAt({ providers: ['mail'] }, { claimedAt: claimed })).toBeUndefined();
  });

  it('of a consumer that names none but calls the recording double all the same: applied when the call was', () => {
    expect(effectAppliedAt({}, { claimedAt: claimed, providerCallDoneAt: done })).toBe(Date.parse(done));
  });

  it('without a claim: not applied', () => {
    expect(effectAppliedAt({}, undefined)).toBeUndefined();
  });
});

describe('the end of a bench run', () => {
  const results = (effectsMissing: number): BenchResults & Record<string, unknown> => ({
    closing: {
      pipelineOrdersPerSecond: 10,
      pipelineOrdersPerCpuSecond: 5,
      emulatorLimitOrdersPerSecond: 20,
      apiReplayP50Ms: 10,
      apiFirstRequestP50Ms: 100,
      cleanPathCostPerMillion: 20,
      defaultPlanCostPerMillion: 25,
      idleCostPerMonth: 8,
      batchSize: 10,
      batches: [],
      faults: { messages: 200, seed: 7, ours: 0, sequenced: 0, plain: 42, powertools: 13 },
    },
    faults: { sides: { ours: { double: 0, missing: 0 }, sequenced: { double: 0, missing: 0 } } },
    pipeline: { effectsMissing, effectsOwed: 400, drained: true },
    batches: { settings: [] },
  });
  const run = (effectsMissing: number) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-exit-'));
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const status = reportBench(results(effectsMissing), { dir, id: 'run', record: {}, entityNoun: 'things' });
    return { status, errors: errors.mock.calls.map(([line]) => String(line)), written: fs.readdirSync(dir) };
  };

  it("exits 1, saying how many, when the domain's consumers left effects missing", () => {
    const { status, errors, written } = run(200);

    expect(status).toBe(1);
    expect(errors).toEqual([
      'bench: FAILED: pipeline: 200 of 400 effects missing after the drain (each consumer of the domain owes one per accepted entity, counted from its inbox claims)',
    ]);
    expect(written).toEqual(['run.json']);
  });

  it('exits 0 with no failure line when every owed effect was applied', () => {
    const { status, errors } = run(0);

    expect(status).toBe(0);
    expect(errors).toEqual([]);
  });
});
