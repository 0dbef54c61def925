import * as os from 'node:os';
import type { ProofDomain } from '../proof-kit/domain';
import { compareInBatches, PROVIDER_WORDS } from './batch-comparison';
import { compareConsumers, type ConsumerKind } from './consumers';
import { cpuSpan, loadAverage, type BenchContext, type BenchLimit } from './bench-context';
import { cpuMeter, perCpuSecond } from './cpu';
import { measureCosts } from './cost-phases';
import { measureEmulatorLimit, type EmulatorLimit } from './emulator-limit';
import { compareUnderFaults } from './fault-comparison';
import { batchLine, consumerLine, faultLine, stepRatesLine, type BatchFigures } from './figures';
import { measureCleanPipeline, measureHotResource, measureLightLoadHops, measureReplayPhase } from './pipeline-phases';
import type { BenchRuntime } from './runtime';
import { measureStepRates } from './step-rates';
import type { BenchTables, PrivateTables } from './tables';
import type { BenchProfile } from './profiles';

/** Every phase of a run, in the order its lines print; what reportBench takes. */
export async function measureAll(
  runtime: BenchRuntime,
  domain: ProofDomain,
  profile: BenchProfile,
  hotSku: boolean,
  print: (line: string) => void,
  tables: BenchTables,
  direct: PrivateTables,
) {
  const ctx = benchContext(runtime, domain, profile, print, tables, direct);
  const { consumers, batches, faults, stepRates } = await measureConsumerSide(ctx);
  const limitBefore = await measureLimitBefore(ctx);
  const clean = await measureCleanPipeline(ctx);
  const { pipeline, pipelinePerCpu } = clean;
  const hotSkuResult = hotSku ? await measureHotResource(ctx) : undefined;
  const hops = await measureLightLoadHops(ctx);
  const { replays, replayCalls } = await measureReplayPhase(ctx, pipeline, limitBefore.limit);
  const limit = await measureLimitAfter(ctx, limitBefore);
  const cost = await measureCosts(ctx, clean, limit);
  print(
    `load average ${loadAverage()} at the end (${os.cpus().length} CPUs): figures are as measured on a shared machine`,
  );

  const batchFigures: BatchFigures[] = batches.settings.map((setting) => ({
    provider: PROVIDER_WORDS[setting.provider],
    ...setting.sides,
  }));
  return {
    emulatorLimit: limit,
    consumers: { ...consumers, stepRates },
    batches,
    faults,
    hops,
    pipeline: { ...pipeline, plan: undefined, observations: undefined, ordersPerCpuSecond: pipelinePerCpu },
    hotSku: hotSkuResult,
    api: {
      firstRequest: pipeline.firstRequest,
      firstRequestDynamoDbCalls: limit.createOrderRoundTrips,
      replay: replays,
      replayDynamoDbCallsPerRequest: replayCalls,
    },
    cost: cost.record,
    closing: {
      pipelineOrdersPerSecond: pipeline.steady?.ordersPerSecond,
      pipelineOrdersPerCpuSecond: pipelinePerCpu,
      emulatorLimitOrdersPerSecond: limit.ordersPerSecond,
      apiReplayP50Ms: replays.latency.p50,
      apiFirstRequestP50Ms: pipeline.firstRequest.p50,
      cleanPathCostPerMillion: cost.record.cleanPath.totalPerMillionEntities,
      defaultPlanCostPerMillion: cost.record.defaultPlan.totalPerMillionEntities,
      idleCostPerMonth: cost.record.idle?.totalPerMonth,
      batchSize: batches.batchSize,
      batches: batchFigures,
      faults: {
        messages: faults.messages,
        seed: faults.seed,
        ours: faults.sides.ours.double,
        sequenced: faults.sides.sequenced.double,
        plain: faults.sides.plain.double,
        powertools: faults.sides.powertools.double,
      },
    },
  };
}

/** The run's shared context, with its first two lines: the runtime and what the CPU meter counts. */
function benchContext(
  runtime: BenchRuntime,
  domain: ProofDomain,
  profile: BenchProfile,
  print: (line: string) => void,
  tables: BenchTables,
  direct: PrivateTables,
): BenchContext {
  print(`runtime ${runtime.source}; ${os.cpus().length} CPUs, load average ${loadAverage()} at start`);
  const cpu = cpuMeter(() => runtime.pids());
  print(
    cpu.includesChildren
      ? 'CPU-normalised rates count this process and the runtime processes (DynamoDB Local, fauxqs, function environments)'
      : 'CPU-normalised rates count this process only: the runtime processes are not reachable from here',
  );
  const label = (name: string) => {
    const role = Object.entries(tables).find(([, t]) => t === direct.originalOf(name))?.[0];
    return role === undefined ? name : role === 'entities' ? domain.entityNoun : role;
  };
  return {
    runtime,
    domain,
    profile,
    print,
    tables,
    direct,
    consumerSpecs: runtime.target.domain.consumers,
    cpu,
    label,
  };
}

const CONSUMER_NAMES: Record<ConsumerKind, string> = {
  plain: 'plain at-least-once consumer',
  powertools: 'Powertools-idempotency consumer',
  ours: 'this consumer',
  sequenced: 'this consumer on the sequenced ledger',
};

/**
 * The three consumers on the private tables: one at a time, in batches as Lambda runs them, under the
 * seeded faults, and the step rates. First in a run: they also warm DynamoDB Local's JIT before the
 * limit is measured.
 */
async function measureConsumerSide({ runtime, profile, print, direct, cpu }: BenchContext) {
  const { target } = runtime;
  const consumers = await compareConsumers({
    endpoint: runtime.dynamodbEndpoint,
    region: target.region,
    tables: direct.tables,
    messages: profile.consumerMessages,
    concurrency: profile.consumerConcurrency,
    cpuSeconds: () => cpu.read(),
  });
  for (const [kind, side] of Object.entries(consumers.sides) as [ConsumerKind, (typeof consumers.sides)['ours']][])
    console.log(
      consumerLine(CONSUMER_NAMES[kind], side, perCpuSecond(consumers.messages, side.firstPassCpuSeconds), consumers),
    );

  // As Lambda runs them: batches of 10 side by side, with a 50 ms HTTP provider and with a DynamoDB write.
  const batches = await compareInBatches({
    endpoint: runtime.dynamodbEndpoint,
    region: target.region,
    tables: direct.tables,
    messages: profile.batchMessages,
    rounds: profile.batchRounds,
    concurrency: profile.batchConcurrency,
    cpuSeconds: () => cpu.read(),
  });
  for (const setting of batches.settings)
    console.log(batchLine(PROVIDER_WORDS[setting.provider], setting.sides, batches));

  const faults = await compareUnderFaults({
    endpoint: runtime.dynamodbEndpoint,
    region: target.region,
    tables: direct.tables,
    messages: profile.faultMessages,
    concurrency: profile.consumerConcurrency,
    seed: profile.faultSeed,
  });
  console.log(faultLine(faults));
  print(
    `fault model: a delivery's invocation lasts ${faults.timing.invocationMs} ms (Powertools' in-progress lock and this consumer's provider-call lease last as long); a delivery not acked comes back after ${faults.timing.visibilityMs} ms; a slow handler stalls ${faults.timing.slowMs} ms after its effect while a second copy arrives at ${faults.timing.concurrentAfterMs} ms`,
  );

  const stepRates = await measureStepRates({
    endpoint: runtime.dynamodbEndpoint,
    region: target.region,
    table: direct.tables.effects,
    requests: profile.consumerMessages,
    concurrency: profile.consumerConcurrency,
  });
  console.log(stepRatesLine(stepRates));
  return { consumers, batches, faults, stepRates };
}

/** The emulator limit's settings: the mechanism's DynamoDB path for the plan's entities, on the private tables. */
function limitOptions({ runtime, domain, profile, direct, consumerSpecs, label }: BenchContext) {
  return {
    endpoint: runtime.dynamodbEndpoint,
    region: runtime.target.region,
    tables: direct.tables,
    domain,
    consumers: consumerSpecs,
    label,
    orders: profile.limitOrders,
    concurrency: profile.limitConcurrency,
  };
}

interface LimitBefore {
  limit: EmulatorLimit;
  cpuSeconds: number;
}

async function measureLimitBefore(ctx: BenchContext): Promise<LimitBefore> {
  const { print, cpu } = ctx;
  const { entityNoun: orders, entityNounSingular: order } = ctx.domain;
  const { result: limitBefore, cpuSeconds: limitCpu } = await cpuSpan(cpu, () =>
    measureEmulatorLimit(limitOptions(ctx)),
  );
  print(`${order} mix (DynamoDB, from the mechanism's code paths): ${limitBefore.mix}`);
  print(
    `emulator limit ${limitBefore.ordersPerSecond.toFixed(1)} ${orders}/s, ${perCpuSecond(limitBefore.orders, limitCpu).toFixed(1)} ${orders} per CPU-second (${limitBefore.orders} ${orders} at concurrency ${limitBefore.concurrency}, ${limitBefore.roundTripsPerOrder.toFixed(1)} round trips per ${order}, straight to DynamoDB Local)`,
  );
  return { limit: limitBefore, cpuSeconds: limitCpu };
}

/**
 * The limit again, after the pipeline: the machine's speed drifts over a run (other work, heat), and
 * a ratio against one measurement minutes earlier carries that drift. The pipeline is compared with the mean.
 */
async function measureLimitAfter(ctx: BenchContext, before: LimitBefore): Promise<BenchLimit> {
  const { entityNoun: orders } = ctx.domain;
  const limitBefore = before.limit;
  const limitAfter = await measureEmulatorLimit(limitOptions(ctx));
  const limit = {
    ...limitBefore,
    ordersPerSecond: (limitBefore.ordersPerSecond + limitAfter.ordersPerSecond) / 2,
    ordersPerCpuSecond: perCpuSecond(limitBefore.orders, before.cpuSeconds),
    beforePipeline: limitBefore.ordersPerSecond,
    afterPipeline: limitAfter.ordersPerSecond,
  };
  ctx.print(
    `emulator limit after the pipeline ${limitAfter.ordersPerSecond.toFixed(1)} ${orders}/s; the pipeline is compared with the mean, ${limit.ordersPerSecond.toFixed(1)} ${orders}/s`,
  );
  return limit;
}
