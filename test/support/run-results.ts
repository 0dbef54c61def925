import { summarize, type CallCounts, type RunResults } from '../../tools/proof-kit/report';
import type { PipelineSamples } from '../../tools/proof-kit/sampler';

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
