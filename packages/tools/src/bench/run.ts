import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { API_KEY_CACHE_SECONDS } from '@exactly-once/runtime/aws/parameter-api-key';
import { example } from '../example';
import type { ProofDomain } from '../proof-kit/domain';
import { DEFAULT_MIX } from '../proof-kit/plan';
import { waitForDrain } from '../proof-kit/drain';
import {
  apiKeyReadsPerEntity,
  costBreakdown,
  sqsBilledRequests,
  UNIT_PRICES,
  type CostBreakdown,
} from '../proof-kit/prices';
import { acceptedIntents } from '../proof-kit/sampler';
import type { RuntimeStats } from '../local-runtime/runtime';
import { scheduleDefinitions } from '../local-runtime/template/schedules';
import { benchDynamoDbClient } from './client';
import {
  compareInBatches,
  HTTP_PROVIDER_LATENCY_MS,
  type BatchComparison,
  type ProviderSetting,
} from './batch-comparison';
import { compareConsumers, type ConsumerKind } from './consumers';
import {
  awsLatencyCostLine,
  awsRepresentativeDuration,
  functionSqsCallsPerOrder,
  gbSecondsPerOrder,
  unitsByTable,
  unitsPerOrderByTable,
} from './cost-model';
import { cpuMeter, perCpuSecond } from './cpu';
import { measureEmulatorLimit } from './emulator-limit';
import { compareUnderFaults } from './fault-comparison';
import {
  batchLine,
  benchFailures,
  closingLines,
  consumerLine,
  faultLine,
  hopLine,
  ratio,
  stepRatesLine,
  type BatchFigures,
  type ClosingFigures,
} from './figures';
import { measureHops, outboxItemsOf } from './hops';
import { idleCost, idleCostLine, type ScheduledMeasurement } from './idle-cost';
import { benchPlan, CLEAN_MIX, drivePlan, measurePipeline, measureReplays } from './pipeline';
import { acquireRuntime, type BenchFunction, type BenchRuntime } from './runtime';
import { measureStepRates } from './step-rates';
import { createPrivateTables, stackTables, type BenchTables, type PrivateTables } from './tables';

/**
 * `npm run bench [-- --profile quick|full] [--hot-sku] [--use-running] [--synth]`:
 * in one run on the local runtime, what exactly-once costs over what a user
 * would build instead (a plain at-least-once consumer, a Powertools-idempotency
 * one) and what those get wrong under the same seeded faults; the emulator
 * limit, the pipeline against it (steady-window throughput, effect lag, lag
 * per hop at light load, per CPU-second too); API first request against
 * replay; cost per million entities (the shop's orders) and idle cost per month. Prints one line per
 * figure and writes bench-results/<id>.json.
 *
 * Built from what every example gives the tools (packages/tools/src/example.ts): its proof domain (the plan the
 * pipeline sends, its entities' ids and events, the table they live in) and its consumer specs. The
 * domain writes nothing for the bench. The figures name the domain's entities by its proof domain's
 * nouns; the profiles' settings keep the shop's words (`pipelineOrders`: entities).
 */
// The SDK's Node-version notice is noise between the figures (the runtime hides it the same way).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const BENCH_PROFILES = {
  quick: {
    limitOrders: 150,
    limitConcurrency: 64,
    consumerMessages: 200,
    consumerConcurrency: 16,
    /** The batch comparison: per consumer and provider, rounds of this many messages in batches of 10. */
    batchMessages: 200,
    batchRounds: 3,
    /** Invocations (batches of 10) in flight at once, for every consumer: 20 records. */
    batchConcurrency: 2,
    pipelineOrders: 200,
    /** Offered load: the drive must outlast the lag, or there is no steady window to measure. */
    pipelineOrdersPerSecond: 15,
    connections: 16,
    defaultPlanOrders: 40,
    drainTimeoutMs: 120_000,
    faultMessages: 200,
    faultSeed: 7,
    hopOrders: 10,
    hopOrdersPerSecond: 2,
    hotSkuOrders: 120,
  },
  full: {
    limitOrders: 1_000,
    limitConcurrency: 64,
    consumerMessages: 1_000,
    consumerConcurrency: 16,
    batchMessages: 500,
    batchRounds: 3,
    batchConcurrency: 2,
    pipelineOrders: 600,
    pipelineOrdersPerSecond: 30,
    connections: 16,
    defaultPlanOrders: 200,
    drainTimeoutMs: 240_000,
    faultMessages: 200,
    faultSeed: 7,
    hopOrders: 30,
    hopOrdersPerSecond: 2,
    hotSkuOrders: 300,
  },
};

export const USAGE = `Usage: npm run bench -- [--profile quick|full] [--hot-sku] [--use-running] [--synth] [--results-dir DIR]
  --profile quick   a few minutes; full (default) under 15 minutes
  --hot-sku         also run the pipeline with every entity on the fewest resources the plan allows (the
                    shop: 1-3 SKUs): rate, effect lag, tries per message
  --use-running     measure the runtime \`npm start\` runs (.local/outputs.json) instead of starting one
  --synth           synthesize even when cdk.out exists
  --results-dir DIR where the results go (default bench-results)
  -h, --help        this text
Exit codes: 0 done, 1 something failed, 2 usage error.`;

/** The benchmark, as `npm run bench` runs it (cli.ts): the exit status. */
export async function runBench(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      profile: { type: 'string', default: 'full' },
      'use-running': { type: 'boolean', default: false },
      synth: { type: 'boolean', default: false },
      'hot-sku': { type: 'boolean', default: false },
      'results-dir': { type: 'string', default: 'bench-results' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!(values.profile! in BENCH_PROFILES)) {
    console.error(`bench: unknown profile "${values.profile}"\n${USAGE}`);
    return 2;
  }
  const profileName = values.profile as keyof typeof BENCH_PROFILES;
  const profile = BENCH_PROFILES[profileName];
  const id = `bench-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const print = (line: string) => console.log(`bench: ${line}`);
  const started = Date.now();
  const domain = example().proof;
  if (domain === undefined) {
    console.error(
      "bench: the example's tooling module gives no proof domain (`proof`, packages/tools/src/proof-kit/domain.ts): the bench has no plan to send",
    );
    return 2;
  }
  const runtime = await acquireRuntime({ useRunning: values['use-running']!, synth: values.synth!, log: print });
  try {
    const results = await benchRun(runtime, domain, profile, values['hot-sku']!, print);
    return reportBench(results, {
      dir: path.resolve(values['results-dir']!),
      id,
      record: {
        profile: profileName,
        settings: profile,
        runtime: runtime.source,
        durationSeconds: (Date.now() - started) / 1000,
      },
      entityNoun: domain.entityNoun,
    });
  } finally {
    await runtime.stop();
  }
}

/** What a bench run measured and judges, as reportBench takes it. */
export interface BenchResults {
  closing: ClosingFigures;
  faults: { sides: { ours: { double: number; missing: number } } };
  pipeline: { effectsMissing: number; effectsOwed: number; drained: boolean };
  hotSku?: { effectsMissing: number; effectsOwed: number; drained: boolean };
  batches: Pick<BatchComparison, 'settings'>;
}

/**
 * The end of a run: the results file, the closing lines, then one line per failure (benchFailures: a
 * double or missed effect of this consumer under faults or in batches, an effect the domain's consumers
 * owe and did not apply); the exit status, 1 on any failure, so a script or CI that runs the bench
 * sees a broken run and not only a line in its log.
 */
export function reportBench(
  results: BenchResults & Record<string, unknown>,
  options: { dir: string; id: string; record: Record<string, unknown>; entityNoun: string },
): number {
  const lines = closingLines(results.closing, options.entityNoun);
  fs.mkdirSync(options.dir, { recursive: true });
  const file = path.join(options.dir, `${options.id}.json`);
  const record = {
    id: options.id,
    ...options.record,
    loadAverage: os.loadavg(),
    cpus: os.cpus().length,
    prices: UNIT_PRICES,
    ...results,
    lines,
  };
  fs.writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`bench: results in ${path.relative(process.cwd(), file)}`);
  // The closing lines last: the comparison under faults is the headline.
  for (const line of lines) console.log(line);
  const failures = benchFailures({
    faults: results.faults.sides.ours,
    pipelines: [
      { name: 'pipeline', ...results.pipeline },
      ...(results.hotSku === undefined ? [] : [{ name: 'hot-resource pipeline', ...results.hotSku }]),
    ],
    batches: results.batches.settings.map((b) => ({ provider: PROVIDER_WORDS[b.provider], ours: b.sides.ours })),
  });
  for (const failure of failures) console.error(failure);
  return failures.length === 0 ? 0 : 1;
}

/** The provider settings of the batch comparison, in the closing lines' words. */
const PROVIDER_WORDS: Record<ProviderSetting, string> = {
  'http-50ms': `a ${HTTP_PROVIDER_LATENCY_MS} ms HTTP provider`,
  'dynamodb-write': 'a DynamoDB-write provider',
};

async function benchRun(
  runtime: BenchRuntime,
  domain: ProofDomain,
  profile: (typeof BENCH_PROFILES)['full'],
  hotSku: boolean,
  print: (line: string) => void,
) {
  // The consumer comparison and the limit write to stream-less copies of the tables, so the running
  // pipeline never sees (and spends the machine on) what they write (tables.ts).
  const admin = benchDynamoDbClient(runtime.dynamodbEndpoint, runtime.target.region);
  try {
    const tables = stackTables(runtime.target.outputs, domain.entityTableOutput, runtime.template, runtime.tables);
    const direct = await createPrivateTables(admin, tables, `bench-${Date.now().toString(36)}`);
    try {
      return await measureAll(runtime, domain, profile, hotSku, print, tables, direct);
    } finally {
      await direct.drop();
    }
  } finally {
    admin.destroy();
  }
}

async function measureAll(
  runtime: BenchRuntime,
  domain: ProofDomain,
  profile: (typeof BENCH_PROFILES)['full'],
  hotSku: boolean,
  print: (line: string) => void,
  tables: BenchTables,
  direct: PrivateTables,
) {
  const { target } = runtime;
  const { consumers: consumerSpecs } = example();
  const { entityNoun: orders, entityNounSingular: order } = domain;
  const load = () => os.loadavg()[0].toFixed(1);
  print(`runtime ${runtime.source}; ${os.cpus().length} CPUs, load average ${load()} at start`);
  // CPU seconds of this process and every runtime process (the JVM, fauxqs, the function environments).
  const cpu = cpuMeter(() => runtime.pids());
  print(
    cpu.includesChildren
      ? 'CPU-normalised rates count this process and the runtime processes (DynamoDB Local, fauxqs, function environments)'
      : 'CPU-normalised rates count this process only: the runtime processes are not reachable from here',
  );
  const cpuSpan = async <T>(work: () => Promise<T>): Promise<{ result: T; cpuSeconds: number }> => {
    const before = cpu.read();
    const result = await work();
    return { result, cpuSeconds: cpu.read() - before };
  };

  // Tables by role, the entity table by the domain's noun (`orders`, `effects`, `idempotency`, `providerLog`).
  const label = (name: string) => {
    const role = Object.entries(tables).find(([, t]) => t === direct.originalOf(name))?.[0];
    return role === undefined ? name : role === 'entities' ? orders : role;
  };
  const limitOptions = {
    endpoint: runtime.dynamodbEndpoint,
    region: target.region,
    tables: direct.tables,
    domain,
    consumers: consumerSpecs,
    label,
    orders: profile.limitOrders,
    concurrency: profile.limitConcurrency,
  };
  // The consumers first: they also warm DynamoDB Local's JIT before the limit is measured.
  const consumers = await compareConsumers({
    endpoint: runtime.dynamodbEndpoint,
    region: target.region,
    tables: direct.tables,
    messages: profile.consumerMessages,
    concurrency: profile.consumerConcurrency,
    cpuSeconds: () => cpu.read(),
  });
  const consumerNames: Record<ConsumerKind, string> = {
    plain: 'plain at-least-once consumer',
    powertools: 'Powertools-idempotency consumer',
    ours: 'this consumer',
  };
  for (const [kind, side] of Object.entries(consumers.sides) as [ConsumerKind, (typeof consumers.sides)['ours']][])
    console.log(
      consumerLine(consumerNames[kind], side, perCpuSecond(consumers.messages, side.firstPassCpuSeconds), consumers),
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
  const { result: limitBefore, cpuSeconds: limitCpu } = await cpuSpan(() => measureEmulatorLimit(limitOptions));
  print(`${order} mix (DynamoDB, from the mechanism's code paths): ${limitBefore.mix}`);
  print(
    `emulator limit ${limitBefore.ordersPerSecond.toFixed(1)} ${orders}/s, ${perCpuSecond(limitBefore.orders, limitCpu).toFixed(1)} ${orders} per CPU-second (${limitBefore.orders} ${orders} at concurrency ${limitBefore.concurrency}, ${limitBefore.roundTripsPerOrder.toFixed(1)} round trips per ${order}, straight to DynamoDB Local)`,
  );

  // Pipeline, clean path: new entities only.
  const statsBefore = await runtime.stats();
  const fnBefore = runtime.functions();
  const { result: pipeline, cpuSeconds: pipelineCpu } = await cpuSpan(() =>
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

  // Hot resources: the plan with one resource (the shop: one SKU per line position, at most 3), so the
  // consumers' shared items are contended; tries per message from the consumers' own outcome metrics.
  let hotSkuResult:
    (Record<string, unknown> & { effectsMissing: number; effectsOwed: number; drained: boolean }) | undefined;
  if (hotSku) {
    const hotBefore = await runtime.stats();
    const { result: hot, cpuSeconds: hotCpu } = await cpuSpan(() =>
      measurePipeline(target, {
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
        .join(', ')} (consumer outcomes: applied + duplicate + transient + permanent failures, per ${order})`,
    );
    hotSkuResult = { ...hot, plan: undefined, observations: undefined, triesPerMessage: tries };
  }

  // Lag per hop at light load, after the loaded runs: every function environment is warm by then.
  const hopPlan = benchPlan(target, profile.hopOrders, CLEAN_MIX, 13);
  const hops = await measureHops(target, hopPlan, runtime.template, profile.drainTimeoutMs, profile.hopOrdersPerSecond);
  print(
    `lag per hop at light load (${hops.orders} ${orders} at ${hops.ordersPerSecond}/s on one connection; local figures, no AWS latencies are measured here):`,
  );
  for (const hop of hops.hops) console.log(hopLine(hop.hop, hop.lag, hop.waitsOn));

  // API: the same requests again, each a replay.
  const replayBefore = await runtime.stats();
  const replays = await measureReplays(target, pipeline.plan, profile.connections);
  const replayAfter = await runtime.stats();
  const replayCalls = ratio(replayAfter.dynamodbCalls - replayBefore.dynamodbCalls, replays.requests);
  print(
    `api first request p50 ${pipeline.firstRequest.p50} ms, p99 ${pipeline.firstRequest.p99} ms, ${limitBefore.createOrderRoundTrips} DynamoDB calls per request (code path); replay p50 ${replays.latency.p50} ms, p99 ${replays.latency.p99} ms, ${replayCalls.toFixed(2)} DynamoDB calls per request (measured; ${replays.replayed}/${replays.requests} replayed)`,
  );

  // The limit again, after the pipeline: the machine's speed drifts over a run (other work, heat), and
  // a ratio against one measurement minutes earlier carries that drift. The pipeline is compared with the mean.
  const limitAfter = await measureEmulatorLimit(limitOptions);
  const limit = {
    ...limitBefore,
    ordersPerSecond: (limitBefore.ordersPerSecond + limitAfter.ordersPerSecond) / 2,
    ordersPerCpuSecond: perCpuSecond(limitBefore.orders, limitCpu),
    beforePipeline: limitBefore.ordersPerSecond,
    afterPipeline: limitAfter.ordersPerSecond,
  };
  print(
    `emulator limit after the pipeline ${limitAfter.ordersPerSecond.toFixed(1)} ${orders}/s; the pipeline is compared with the mean, ${limit.ordersPerSecond.toFixed(1)} ${orders}/s`,
  );

  // SQS bills each 64 KB of a request as one request: a full batch of ten of the largest events the
  // pipeline produced (as the outbox holds them) is the largest request sent.
  const sampled = acceptedIntents(pipeline.plan, pipeline.observations, domain).slice(0, 50);
  const outboxed = await outboxItemsOf(
    target,
    tables.entities,
    sampled.map((a) => a.eventId),
  );
  const eventBytes = Math.max(0, ...[...outboxed.values()].map((item) => item.eventBytes));
  const sqsChunks = sqsBilledRequests(10 * eventBytes);

  // Cost, clean path: one POST per entity, effects applied, no retries; DynamoDB as the runtime's
  // counting proxy saw the stack's functions use it (the domain's own effects included).
  const cleanOrders = pipeline.accepted;
  // A deployment's providers are HTTP APIs: the recording double's table, which stands in for a provider
  // the runtime does not serve (and for every provider in the emulator limit), is no cost it pays; the
  // reads of the providers' API keys are.
  const { providerLog: _servedLocally, ...deployedTables } = unitsPerOrderByTable(
    statsBefore,
    statsAfter,
    cleanOrders,
    label,
  );
  const recordingDouble = unitsByTable(limit.oneOrder, label).providerLog;
  const keysPerContainer = consumerSpecs.reduce((n, c) => n + (c.providers?.length ?? 0), 0);
  const keyReadRate = pipeline.steady?.ordersPerSecond ?? pipeline.ordersPerSecond;
  const clean = costBreakdown({
    apiRequestsPerEntity: 1,
    lambdaInvocationsPerEntity: ratio(statsAfter.lambdaInvocations - statsBefore.lambdaInvocations, cleanOrders),
    lambdaGbSecondsPerEntity: gbSeconds(fnBefore, fnAfter, cleanOrders),
    dynamoDb: deployedTables,
    sqsRequestsPerEntity: sqsChunks * ratio(statsAfter.sqs - statsBefore.sqs, cleanOrders),
    apiKeyReadsPerEntity: apiKeyReadsPerEntity({
      entitiesPerSecond: keyReadRate,
      cacheSeconds: API_KEY_CACHE_SECONDS,
      keysPerContainer,
    }),
  });
  printCost('clean path', clean, print, order, orders);
  const awsTrips = limit.oneOrder.filter((t) => !t.tables.some((n) => label(n) === 'providerLog'));
  const awsSqs = functionSqsCallsPerOrder(statsBefore, statsAfter, cleanOrders);
  const aws = awsRepresentativeDuration({
    dynamodbTrips: awsTrips,
    sqsCallsPerOrder: awsSqs,
    memoryMb: fnAfter?.[0]?.memoryMb ?? 256,
  });
  print(
    awsLatencyCostLine(
      'clean path',
      clean,
      aws,
      { dynamodbTrips: awsTrips.length, sqsCallsPerOrder: awsSqs },
      undefined,
      { order, orders },
    ),
  );
  print(
    `clean path without the recording double's table (${(recordingDouble?.writeUnits ?? 0).toFixed(1)} WRU/${order} it would add), with ${keysPerContainer} API keys read once per ${API_KEY_CACHE_SECONDS} s per warm container at ${keyReadRate.toFixed(1)} ${orders}/s; the providers' own charges (per call, per message) are theirs`,
  );

  // Cost, the proof kit's default plan mix (retries, cancels, reads), measured.
  const defaultBefore = await runtime.stats();
  const fnDefaultBefore = runtime.functions();
  const plan = benchPlan(target, profile.defaultPlanOrders, DEFAULT_MIX, 12);
  const driven = await drivePlan(target, plan, profile.connections);
  await waitForDrain(target, { timeoutMs: profile.drainTimeoutMs, pollMs: 250 });
  const defaultAfter = await runtime.stats();
  const fnDefaultAfter = runtime.functions();
  const ordersPlaced = new Set(
    driven.observations.filter((o) => o.status === 201 && !o.replayed).map((o) => plan[o.index].idempotencyKey),
  ).size;
  const perOrder = (key: 'dynamodbWrites' | 'dynamodbReads' | 'sqs' | 'lambdaInvocations') =>
    ratio(defaultAfter[key] - defaultBefore[key], ordersPlaced);
  const defaultPlan = costBreakdown({
    apiRequestsPerEntity: ratio(plan.length, ordersPlaced),
    lambdaInvocationsPerEntity: perOrder('lambdaInvocations'),
    lambdaGbSecondsPerEntity: gbSeconds(fnDefaultBefore, fnDefaultAfter, ordersPlaced),
    dynamoDb: unitsPerOrderByTable(defaultBefore, defaultAfter, ordersPlaced, label),
    sqsRequestsPerEntity: sqsChunks * perOrder('sqs'),
  });
  printCost(`default plan (${plan.length} requests for ${ordersPlaced} ${orders})`, defaultPlan, print, order, orders);
  if (runtime.functions() === undefined)
    print('Lambda duration not measured: only a runtime the bench starts itself reports per-function time');

  // Idle cost: the template's fixed items, and one scheduled invocation measured while nothing else runs.
  const idle = runtime.template === undefined ? undefined : idleCost(runtime.template, await measureScheduled(runtime));
  if (idle === undefined) print('idle cost not computed: no synthesized template (cdk.out) found');
  else console.log(idleCostLine(idle));
  print(`prices: ${UNIT_PRICES.asOf}`);
  print(`load average ${load()} at the end (${os.cpus().length} CPUs): figures are as measured on a shared machine`);

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
    cost: {
      cleanPath: clean,
      defaultPlan,
      idle,
      statsDelta: { clean: delta(statsBefore, statsAfter), defaultPlan: delta(defaultBefore, defaultAfter) },
    },
    closing: {
      pipelineOrdersPerSecond: pipeline.steady?.ordersPerSecond,
      pipelineOrdersPerCpuSecond: pipelinePerCpu,
      emulatorLimitOrdersPerSecond: limit.ordersPerSecond,
      apiReplayP50Ms: replays.latency.p50,
      apiFirstRequestP50Ms: pipeline.firstRequest.p50,
      cleanPathCostPerMillion: clean.totalPerMillionEntities,
      defaultPlanCostPerMillion: defaultPlan.totalPerMillionEntities,
      idleCostPerMonth: idle?.totalPerMonth,
      batchSize: batches.batchSize,
      batches: batchFigures,
      faults: {
        messages: faults.messages,
        seed: faults.seed,
        ours: faults.sides.ours.double,
        plain: faults.sides.plain.double,
        powertools: faults.sides.powertools.double,
      },
    },
  };
}

function pipelineLine(
  name: string,
  p: Awaited<ReturnType<typeof measurePipeline>>,
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

/**
 * One invocation of each scheduled function, at idle (after the last drain), with what it read and
 * logged: the runtime's counters move only for it then. Empty for a runtime the bench did not start.
 */
async function measureScheduled(runtime: BenchRuntime): Promise<Record<string, ScheduledMeasurement>> {
  const measured: Record<string, ScheduledMeasurement> = {};
  if (runtime.template === undefined || runtime.invoke === undefined) return measured;
  for (const schedule of scheduleDefinitions(runtime.template).schedules)
    for (const { functionLogicalId: id } of schedule.targets) {
      const event = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };
      await runtime.invoke(id, event); // warm: a cold start is not the steady cost
      const stats = await runtime.stats();
      const busy = runtime.functions()?.find((f) => f.logicalId === id)?.busyMs ?? 0;
      const logs = runtime.logBytes();
      await runtime.invoke(id, event);
      const after = await runtime.stats();
      const logsAfter = runtime.logBytes();
      measured[id] = {
        durationMs: (runtime.functions()?.find((f) => f.logicalId === id)?.busyMs ?? 0) - busy,
        readUnits: after.dynamodbReads - stats.dynamodbReads,
        logBytes: logs === undefined || logsAfter === undefined ? undefined : logsAfter - logs,
      };
    }
  return measured;
}

function gbSeconds(
  before: BenchFunction[] | undefined,
  after: BenchFunction[] | undefined,
  orders: number,
): number | undefined {
  if (before === undefined || after === undefined) return undefined;
  const used = after.map((f) => {
    const b = before.find((x) => x.logicalId === f.logicalId);
    return { memoryMb: f.memoryMb, busyMs: f.busyMs - (b?.busyMs ?? 0) };
  });
  return gbSecondsPerOrder(used, orders);
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

function delta(before: RuntimeStats, after: RuntimeStats) {
  return {
    dynamodbWrites: after.dynamodbWrites - before.dynamodbWrites,
    dynamodbReads: after.dynamodbReads - before.dynamodbReads,
    dynamodbCalls: after.dynamodbCalls - before.dynamodbCalls,
    sqs: after.sqs - before.sqs,
    lambdaInvocations: after.lambdaInvocations - before.lambdaInvocations,
  };
}

function printCost(
  name: string,
  cost: CostBreakdown,
  print: (line: string) => void,
  order: string,
  orders: string,
): void {
  const parts = cost.components.map(
    (c) =>
      `${c.component} ${c.unitsPerEntity.toFixed(c.unitsPerEntity < 0.1 ? 4 : 2)}/${order} = $${c.dollarsPerMillionEntities.toFixed(2)}`,
  );
  print(`cost ${name}: $${cost.totalPerMillionEntities.toFixed(2)} per million ${orders} = ${parts.join('; ')}`);
}
