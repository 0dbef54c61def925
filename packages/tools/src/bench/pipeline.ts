import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
import { proofDomainOf } from '../domain-parts';
import { waitForDrain } from '../proof-kit/drain';
import { drive, type Observation } from '../proof-kit/drive';
import type { Mix, PlannedRequest } from '../proof-kit/plan';
import { seededRandom } from '../proof-kit/random';
import { acceptedIntents } from '../proof-kit/sampler';
import type { Target } from '../proof-kit/target';
import { appliedEffects } from './effects';
import { perSecond, steadyWindow, summarizeLatencies, type LatencySummary, type SteadyWindow } from './figures';
import { outboxItemsOf } from './hops';

/**
 * The pipeline end to end, through the proof kit's own plan, driver and drain:
 * new orders only (the clean path), then the same requests again (every one a
 * replay). Effects are read back from the domain's consumers' inbox claims (effects.ts): every
 * consumer the example declares owes one effect per accepted entity, whether it calls a provider or not.
 */
export const CLEAN_MIX: Mix = { new: 1, retrySequential: 0, retryConcurrent: 0, cancel: 0, read: 0 };

export interface PipelineResult {
  orders: number;
  accepted: number;
  offeredOrdersPerSecond?: number;
  /** First request to last effect: fixed lag included. */
  ordersPerSecond: number;
  /** Orders completed (every effect applied) between the first effect and the last order accepted. */
  steady: SteadyWindow | undefined;
  firstRequestToLastEffectMs: number;
  effectLagMs: Record<string, LatencySummary>;
  /** Effects owed (one per consumer per accepted entity) and not applied once the pipeline drained. */
  effectsMissing: number;
  /** Effects owed: accepted entities times the domain's consumers. */
  effectsOwed: number;
  drained: boolean;
  firstRequest: LatencySummary;
  plan: PlannedRequest[];
  observations: Observation[];
}

export function benchPlan(
  target: Target,
  orders: number,
  mix: Mix,
  seed: number,
  skus = Math.max(5, Math.ceil(orders / 12)),
): PlannedRequest[] {
  const runId = `bp${Date.now().toString(36)}${seed}`;
  const domain = proofDomainOf(target.domain);
  return domain.buildPlan(seededRandom(seed), {
    intents: orders,
    mix,
    callers: target.callers.map((c) => c.arn),
    parties: Math.max(5, Math.ceil(orders / 8)),
    // 1: every order on one SKU per line position (the proof kit's hot-sku profile).
    resources: skus,
    runId,
    entityIdOf: domain.entityIdOf,
  });
}

export async function drivePlan(target: Target, plan: readonly PlannedRequest[], connections: number, rate?: number) {
  return drive(plan, { apiUrl: target.apiUrl, region: target.region, callers: target.callers, connections, rate });
}

export async function measurePipeline(
  target: Target,
  options: {
    orders: number;
    connections: number;
    drainTimeoutMs: number;
    seed: number;
    skus?: number;
    /** Offered load; undefined: as fast as the connections go. */
    ordersPerSecond?: number;
  },
): Promise<PipelineResult> {
  const plan = benchPlan(target, options.orders, CLEAN_MIX, options.seed, options.skus);
  const driven = await drivePlan(target, plan, options.connections, options.ordersPerSecond);
  const drain = await waitForDrain(target, { timeoutMs: options.drainTimeoutMs, pollMs: 250 });
  const accepted = driven.observations.filter((o) => o.status === 201);
  const acceptedAt = new Map(
    acceptedIntents(plan, driven.observations, proofDomainOf(target.domain)).map((a) => [a.eventId, a.acceptedAt]),
  );
  const { consumers } = target.domain;
  const consumerNames = consumers.map((c) => c.name);
  // The claims are keyed by the tenant the producer stamped on each event (the stored outbox event's).
  const outboxed = await outboxItemsOf(target, target.outputs[proofDomainOf(target.domain).entityTableOutput], [
    ...acceptedAt.keys(),
  ]);
  const applied = await appliedEffects(
    target.dynamodb,
    target.outputs[STACK_OUTPUTS.effectsTableName],
    consumers,
    [...acceptedAt.keys()].map((eventId) => ({ eventId, tenant: outboxed.get(eventId)?.tenant })),
  );
  const lags: Record<string, number[]> = Object.fromEntries(consumerNames.map((c) => [c, []]));
  let lastEffect = 0;
  let missing = 0;
  const completedAt: number[] = [];
  for (const [eventId, at] of acceptedAt) {
    let complete = 0;
    for (const consumer of consumerNames) {
      const when = applied.get(`${consumer}:${eventId}`);
      if (when === undefined) {
        missing++;
        complete = Number.NaN;
        continue;
      }
      lags[consumer].push(Math.max(0, when - at));
      lastEffect = Math.max(lastEffect, when);
      complete = Math.max(complete, when);
    }
    if (!Number.isNaN(complete)) completedAt.push(complete);
  }
  const firstRequest = Math.min(...driven.observations.map((o) => o.startedAt));
  const spanMs = lastEffect - firstRequest;
  return {
    orders: options.orders,
    accepted: accepted.length,
    offeredOrdersPerSecond: options.ordersPerSecond,
    ordersPerSecond: perSecond(accepted.length, spanMs),
    steady: steadyWindow([...acceptedAt.values()], completedAt),
    firstRequestToLastEffectMs: spanMs,
    effectLagMs: Object.fromEntries(Object.entries(lags).map(([c, values]) => [c, summarizeLatencies(values)])),
    effectsMissing: missing,
    effectsOwed: acceptedAt.size * consumerNames.length,
    drained: drain.drained,
    firstRequest: summarizeLatencies(accepted.map((o) => o.latencyMs)),
    plan,
    observations: driven.observations,
  };
}

/** The same requests again: each one is a replay of a stored response. */
export async function measureReplays(target: Target, plan: readonly PlannedRequest[], connections: number) {
  const driven = await drivePlan(target, plan, connections);
  const replays = driven.observations.filter((o) => o.replayed);
  return {
    requests: plan.length,
    replayed: replays.length,
    latency: summarizeLatencies(replays.map((o) => o.latencyMs)),
  };
}
