import type { ProofDomain } from '../proof-kit/domain';
import { perCpuSecond } from './cpu';
import type { EmulatorLimit } from './emulator-limit';
import { hopLine, ratio } from './figures';
import { measureHops } from './hops';
import { benchPlan, CLEAN_MIX, measurePipeline, measureReplays } from './pipeline';
import type { BenchFunction } from './runtime';
import { cpuSpan, type BenchContext } from './bench-context';

type Pipeline = Awaited<ReturnType<typeof measurePipeline>>;
import type { RuntimeStats } from '../local-runtime/runtime';

/** The clean pipeline with what the runtime counted around it (the clean path's cost is taken from these). */
export interface CleanPipeline {
  pipeline: Pipeline;
  pipelinePerCpu: number | undefined;
  statsBefore: RuntimeStats;
  statsAfter: RuntimeStats;
  fnBefore: BenchFunction[] | undefined;
  fnAfter: BenchFunction[] | undefined;
}

/** Pipeline, clean path: new entities only. */
export async function measureCleanPipeline({
  runtime,
  domain,
  profile,
  print,
  cpu,
}: BenchContext): Promise<CleanPipeline> {
  const { target } = runtime;
  const { entityNoun: orders, entityNounSingular: order } = domain;
  const statsBefore = await runtime.stats();
  const fnBefore = runtime.functions();
  const { result: pipeline, cpuSeconds: pipelineCpu } = await cpuSpan(cpu, () =>
    measurePipeline(target, {
      orders: profile.pipelineOrders,
      connections: profile.connections,
      drainTimeoutMs: profile.drainTimeoutMs,
      seed: 11,
      ordersPerSecond: profile.pipelineOrdersPerSecond,
    }),
  );
  const statsAfter = await runtime.stats();
  const fnAfter = runtime.functions();
  const pipelinePerCpu = cpu.includesChildren ? perCpuSecond(pipeline.accepted, pipelineCpu) : undefined;
  print(pipelineLine('pipeline', pipeline, pipelinePerCpu, profile.connections, domain));
  const profileLine = functionProfile(fnBefore, fnAfter);
  if (profileLine !== undefined) print(`where the pipeline's function time went: ${profileLine}`);
  for (const [consumer, lag] of Object.entries(pipeline.effectLagMs))
    print(
      `effect lag ${consumer}: p50 ${lag.p50} ms, p99 ${lag.p99} ms (${order} accepted -> effect applied, ${lag.count} ${orders})`,
    );
  return { pipeline, pipelinePerCpu, statsBefore, statsAfter, fnBefore, fnAfter };
}

/**
 * Hot resources: the plan with one resource (the shop: one SKU per line position, at most 3), so the
 * consumers' shared items are contended; tries per message from the consumers' own outcome metrics.
 */
export async function measureHotResource({
  runtime,
  domain,
  profile,
  print,
  cpu,
}: BenchContext): Promise<Record<string, unknown> & { effectsMissing: number; effectsOwed: number; drained: boolean }> {
  const hotBefore = await runtime.stats();
  const { result: hot, cpuSeconds: hotCpu } = await cpuSpan(cpu, () =>
    measurePipeline(runtime.target, {
      orders: profile.hotSkuOrders,
      connections: profile.connections,
      drainTimeoutMs: profile.drainTimeoutMs,
      seed: 14,
      skus: 1,
      ordersPerSecond: profile.pipelineOrdersPerSecond,
    }),
  );
  const hotAfter = await runtime.stats();
  const tries = triesPerMessage(hotBefore.metrics, hotAfter.metrics, hot.accepted);
  print(
    pipelineLine(
      'hot-resource pipeline (the plan on 1 resource)',
      hot,
      cpu.includesChildren ? perCpuSecond(hot.accepted, hotCpu) : undefined,
      profile.connections,
      domain,
    ),
  );
  print(
    `hot-resource effect lag ${Object.entries(hot.effectLagMs)
      .map(([c, lag]) => `${c} p50 ${lag.p50} ms, p99 ${lag.p99} ms`)
      .join('; ')}; tries per message ${Object.entries(tries)
      .map(([c, t]) => `${c} ${t.toFixed(2)}`)
      .join(
        ', ',
      )} (consumer outcomes: applied + duplicate + transient + permanent failures, per ${domain.entityNounSingular})`,
  );
  return { ...hot, plan: undefined, observations: undefined, triesPerMessage: tries };
}

/** Lag per hop at light load, after the loaded runs: every function environment is warm by then. */
export async function measureLightLoadHops({ runtime, domain, profile, print }: BenchContext) {
  const { target } = runtime;
  const hopPlan = benchPlan(target, profile.hopOrders, CLEAN_MIX, 13);
  const hops = await measureHops(target, hopPlan, runtime.template, profile.drainTimeoutMs, profile.hopOrdersPerSecond);
  print(
    `lag per hop at light load (${hops.orders} ${domain.entityNoun} at ${hops.ordersPerSecond}/s on one connection; local figures, no AWS latencies are measured here):`,
  );
  for (const hop of hops.hops) console.log(hopLine(hop.hop, hop.lag, hop.waitsOn));
  return hops;
}

/** API: the same requests as the clean pipeline again, each a replay. */
export async function measureReplayPhase(
  { runtime, profile, print }: BenchContext,
  pipeline: Pipeline,
  limitBefore: EmulatorLimit,
) {
  const replayBefore = await runtime.stats();
  const replays = await measureReplays(runtime.target, pipeline.plan, profile.connections);
  const replayAfter = await runtime.stats();
  const replayCalls = ratio(replayAfter.dynamodbCalls - replayBefore.dynamodbCalls, replays.requests);
  print(
    `api first request p50 ${pipeline.firstRequest.p50} ms, p99 ${pipeline.firstRequest.p99} ms, ${limitBefore.createOrderRoundTrips} DynamoDB calls per request (code path); replay p50 ${replays.latency.p50} ms, p99 ${replays.latency.p99} ms, ${replayCalls.toFixed(2)} DynamoDB calls per request (measured; ${replays.replayed}/${replays.requests} replayed)`,
  );
  return { replays, replayCalls };
}

function pipelineLine(
  name: string,
  p: Pipeline,
  perCpu: number | undefined,
  connections: number,
  { entityNoun: orders, entityNounSingular: order }: ProofDomain,
): string {
  const steady =
    p.steady === undefined
      ? `steady window: none (the last ${order} was accepted before the first completed)`
      : `${p.steady.ordersPerSecond.toFixed(1)} ${orders}/s over the steady window (${p.steady.completed} ${orders} completed in ${(p.steady.spanMs / 1000).toFixed(1)} s between the first ${order} completed and the last accepted)`;
  const cpuPart =
    perCpu === undefined ? 'per CPU-second not measured' : `${perCpu.toFixed(1)} ${orders} per CPU-second`;
  return `${name} ${steady}; ${p.ordersPerSecond.toFixed(1)} ${orders}/s end to end (first request to last effect ${(p.firstRequestToLastEffectMs / 1000).toFixed(1)} s, fixed lag included); ${cpuPart}; ${p.accepted}/${p.orders} accepted, offered ${p.offeredOrdersPerSecond ?? 'unpaced'} ${orders}/s on ${connections} connections, drained: ${p.drained ? 'yes' : 'NO'}${p.effectsMissing ? `, ${p.effectsMissing} effects missing` : ''}`;
}

/** Consumer tries per entity over a phase, from the outcome metrics the consumers emit. */
function triesPerMessage(
  before: Record<string, number>,
  after: Record<string, number>,
  orders: number,
): Record<string, number> {
  const tries: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const match = /^(EffectApplied|DuplicateSuppressed|TransientFailure|PermanentFailure)\{consumer=([^,}]+)/.exec(key);
    if (match === null) continue;
    tries[match[2]] = (tries[match[2]] ?? 0) + value - (before[key] ?? 0);
  }
  return Object.fromEntries(Object.entries(tries).map(([c, n]) => [c, ratio(n, orders)]));
}

/** Per function over a phase: invocations and mean time per invocation (queueing in the host excluded). */
function functionProfile(before: BenchFunction[] | undefined, after: BenchFunction[] | undefined): string | undefined {
  if (before === undefined || after === undefined) return undefined;
  return after
    .map((f) => {
      const b = before.find((x) => x.logicalId === f.logicalId);
      const invocations = f.invocations - (b?.invocations ?? 0);
      const busyMs = f.busyMs - (b?.busyMs ?? 0);
      return { name: f.logicalId.replace(/[0-9A-F]{8}$/, ''), invocations, busyMs };
    })
    .filter((f) => f.invocations > 0)
    .sort((x, y) => y.busyMs - x.busyMs)
    .map(
      (f) =>
        `${f.name} ${f.invocations} invocations, ${(f.busyMs / 1000).toFixed(1)} s busy (${(f.busyMs / f.invocations).toFixed(0)} ms each)`,
    )
    .join('; ');
}
