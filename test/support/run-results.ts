import { summarize, type CallCounts, type RunResults } from '@exactly-once/tools/proof-kit/report';
import type { PipelineSamples } from '@exactly-once/tools/proof-kit/sampler';
import { checkInvariants, type Verification } from '@exactly-once/tools/proof-kit/verify';
import { proofDomainOf } from '@exactly-once/tools/domain-parts';
import { exampleDomain } from './example-domain';

/**
 * A proof-kit run's results for report tests: one accepted request of a smoke run under the crash
 * fault, drained, with the given verification (and pipeline samples and call counts, if any).
 */
export function smokeRunResults(
  verification: RunResults['verification'],
  options: { pipeline?: PipelineSamples; calls?: CallCounts } = {},
): RunResults {
  return summarize({
    runId: 'lt1',
    target: 'local:test',
    seed: 1,
    profile: 'smoke',
    faults: ['crash'],
    startedAt: '2026-01-01T00:00:00.000Z',
    plan: [],
    observations: [{ index: 0, status: 201, replayed: false, startedAt: 0, latencyMs: 10 }],
    durationMs: 1_000,
    injected: { poisonMessages: 0, redriven: 0 },
    drain: { drained: true, waitedMs: 1 },
    verification,
    calls: options.calls ?? { apiRequests: 1 },
    pipeline: options.pipeline,
  });
}

/** The verdict of a run that saw nothing: no plan, no entities, no effects, no dead letters. */
export function emptyVerification(): Verification {
  return checkInvariants({
    runId: 'lt',
    checkIntents: false,
    plan: [],
    observations: [],
    entityIdOf: (caller, key) => `${caller}:${key}`,
    isPoison: () => false,
    pendingOutbox: 0,
    entities: [],
    effectItems: [],
    providerItems: [],
    deadLetterQueues: [],
    consumers: exampleDomain().consumers,
    domain: proofDomainOf(exampleDomain()),
  });
}
