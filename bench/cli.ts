import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_MIX } from '../loadtest/plan';
import { waitForDrain } from '../loadtest/drain';
import { costBreakdown, sqsBilledRequests, UNIT_PRICES, type CostBreakdown } from '../loadtest/prices';
import { orderPlacedEvent } from '../lambdas/domain/events';
import { orderTotalCents } from '../lambdas/domain/order';
import type { RuntimeStats } from '../local/runtime';
import { compareConsumers } from './consumer-vs-peer';
import { gbSecondsPerOrder, unitsByTable, unitsPerOrderByTable } from './cost-model';
import { benchDynamoDbClient, benchOrder, measureEmulatorLimit, type Tables } from './emulator-limit';
import { closingLines, ratio, stepRatesLine } from './figures';
import { benchPlan, drivePlan, measurePipeline, measureReplays } from './pipeline';
import { createPrivateTables, type PrivateTables } from './private-tables';
import { measureStepRates } from './step-rates';
import { acquireRuntime, type BenchFunction, type BenchRuntime } from './runtime';

/**
 * `npm run bench [-- --profile quick|full] [--use-running] [--synth]`: the
 * emulator limit, the pipeline against it, this consumer against a Powertools
 * idempotency consumer, API first request against replay, and the cost per
 * million orders, in one run on the local runtime. Prints one line per figure
 * and writes bench-results/<id>.json.
 */
// The SDK's Node-version notice is noise between the figures (the runtime hides it the same way).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const BENCH_PROFILES = {
  quick: {
    limitOrders: 150,
    limitConcurrency: 64,
    consumerMessages: 200,
    consumerConcurrency: 16,
    pipelineOrders: 120,
    connections: 16,
    defaultPlanOrders: 40,
    drainTimeoutMs: 120_000,
  },
  full: {
    limitOrders: 1_000,
    limitConcurrency: 64,
    consumerMessages: 1_000,
    consumerConcurrency: 16,
    pipelineOrders: 600,
    connections: 16,
    defaultPlanOrders: 200,
    drainTimeoutMs: 240_000,
  },
};

const USAGE = `Usage: npm run bench -- [--profile quick|full] [--use-running] [--synth] [--results-dir DIR]
  --profile quick   under 2 minutes (CI); full (default) under 10 minutes
  --use-running     measure the runtime \`npm start\` runs (.local/outputs.json) instead of starting one
  --synth           synthesize even when cdk.out exists`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      profile: { type: 'string', default: 'full' },
      'use-running': { type: 'boolean', default: false },
      synth: { type: 'boolean', default: false },
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
  const runtime = await acquireRuntime({ useRunning: values['use-running']!, synth: values.synth!, log: print });
  try {
    const results = await runBench(runtime, profile, print);
    const lines = closingLines(results.closing);
    for (const line of lines) console.log(line);
    const dir = path.resolve(values['results-dir']!);
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${id}.json`);
    const record = {
      id,
      profile: profileName,
      settings: profile,
      runtime: runtime.source,
      loadAverage: os.loadavg(),
      cpus: os.cpus().length,
      durationSeconds: (Date.now() - started) / 1000,
      prices: UNIT_PRICES,
      ...results,
      lines,
    };
    fs.writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
    console.log(
      `bench: results in ${path.relative(process.cwd(), file)} (${((Date.now() - started) / 1000).toFixed(0)} s)`,
    );
    return 0;
  } finally {
    await runtime.stop();
  }
}

async function runBench(
  runtime: BenchRuntime,
  profile: (typeof BENCH_PROFILES)['full'],
  print: (line: string) => void,
) {
  // The consumer comparison and the limit write to stream-less copies of the tables, so the running
  // pipeline never sees (and spends the machine on) what they write (private-tables.ts).
  const admin = benchDynamoDbClient(runtime.dynamodbEndpoint, runtime.target.region);
  try {
    const tables = stackTables(runtime);
    const direct = await createPrivateTables(admin, tables, `bench-${Date.now().toString(36)}`);
    try {
      return await measureAll(runtime, profile, print, tables, direct);
    } finally {
      await direct.drop();
    }
  } finally {
    admin.destroy();
  }
}

function stackTables(runtime: BenchRuntime): Tables {
  const { outputs } = runtime.target;
  return {
    orders: outputs.OrdersTableName,
    idempotency: outputs.IdempotencyTableName,
    effects: outputs.EffectsTableName,
    providerLog: outputs.ProviderLogTableName,
  };
}

async function measureAll(
  runtime: BenchRuntime,
  profile: (typeof BENCH_PROFILES)['full'],
  print: (line: string) => void,
  tables: Tables,
  direct: PrivateTables,
) {
  const { target } = runtime;
  const load = () => os.loadavg()[0].toFixed(1);
  print(`runtime ${runtime.source}; ${os.cpus().length} CPUs, load average ${load()} at start`);

  const label = (name: string) => Object.entries(tables).find(([, t]) => t === direct.originalOf(name))?.[0] ?? name;
  const limitOptions = {
    endpoint: runtime.dynamodbEndpoint,
    region: target.region,
    tables: direct.tables,
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
  });
  const stepRates = await measureStepRates({
    endpoint: runtime.dynamodbEndpoint,
    region: target.region,
    table: direct.tables.effects,
    requests: profile.consumerMessages,
    concurrency: profile.consumerConcurrency,
  });
  const limitBefore = await measureEmulatorLimit(limitOptions);
  for (const [name, side] of [
    ['this consumer', consumers.ours],
    ['Powertools-idempotency consumer', consumers.peer],
  ] as const) {
    print(
      `${name}: first delivery ${side.messagesPerSecond.first.toFixed(0)} msg/s, ${side.roundTripsPerMessage.first.toFixed(1)} round trips/msg; duplicate ${side.messagesPerSecond.duplicate.toFixed(0)} msg/s, ${side.roundTripsPerMessage.duplicate.toFixed(1)} round trips/msg; provider calls/msg ${side.providerCallsPerMessage.first.toFixed(1)} then ${side.providerCallsPerMessage.duplicate.toFixed(1)} (${consumers.messages} messages at concurrency ${consumers.concurrency})`,
    );
  }

  console.log(stepRatesLine(stepRates));
  print(`order mix (DynamoDB, from the code paths): ${limitBefore.mix}`);
  print(
    `emulator limit ${limitBefore.ordersPerSecond.toFixed(1)} orders/s (${limitBefore.orders} orders at concurrency ${limitBefore.concurrency}, ${limitBefore.roundTripsPerOrder.toFixed(1)} round trips per order, straight to DynamoDB Local)`,
  );

  // Pipeline, clean path: new orders only.
  const statsBefore = await runtime.stats();
  const fnBefore = runtime.functions();
  const pipeline = await measurePipeline(target, {
    orders: profile.pipelineOrders,
    connections: profile.connections,
    drainTimeoutMs: profile.drainTimeoutMs,
    seed: 11,
  });
  const statsAfter = await runtime.stats();
  const fnAfter = runtime.functions();
  print(
    `pipeline ${pipeline.ordersPerSecond.toFixed(1)} orders/s end to end (${pipeline.accepted}/${pipeline.orders} accepted, first request to last effect ${(pipeline.firstRequestToLastEffectMs / 1000).toFixed(1)} s, ${profile.connections} connections, drained: ${pipeline.drained ? 'yes' : 'NO'}${pipeline.effectsMissing ? `, ${pipeline.effectsMissing} effects missing` : ''})`,
  );
  const profileLine = functionProfile(fnBefore, fnAfter);
  if (profileLine !== undefined) print(`where the pipeline's function time went: ${profileLine}`);
  for (const [consumer, lag] of Object.entries(pipeline.effectLagMs))
    print(
      `effect lag ${consumer}: p50 ${lag.p50} ms, p99 ${lag.p99} ms (order accepted -> effect applied, ${lag.count} orders)`,
    );

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
    beforePipeline: limitBefore.ordersPerSecond,
    afterPipeline: limitAfter.ordersPerSecond,
  };
  print(
    `emulator limit after the pipeline ${limitAfter.ordersPerSecond.toFixed(1)} orders/s; the pipeline is compared with the mean, ${limit.ordersPerSecond.toFixed(1)} orders/s`,
  );

  // SQS bills each 64 KB of a request as one request: a full batch of ten events is the largest request sent.
  const sample = benchOrder('bench', 0);
  const eventBytes = Buffer.byteLength(
    JSON.stringify(
      orderPlacedEvent(
        {
          orderId: 'ord_'.padEnd(36, '0'),
          customerId: sample.customerId,
          items: sample.items,
          totalCents: orderTotalCents(sample.items),
        },
        new Date().toISOString(),
      ),
    ),
  );
  const sqsChunks = sqsBilledRequests(10 * eventBytes);

  // Cost, clean path: one POST per order, effects applied, no retries.
  const cleanOrders = pipeline.accepted;
  const clean = costBreakdown({
    apiRequestsPerOrder: 1,
    lambdaInvocationsPerOrder: ratio(statsAfter.lambdaInvocations - statsBefore.lambdaInvocations, cleanOrders),
    lambdaGbSecondsPerOrder: gbSeconds(fnBefore, fnAfter, cleanOrders),
    dynamoDb: unitsByTable(limit.oneOrder, label),
    sqsRequestsPerOrder: sqsChunks * ratio(statsAfter.sqs - statsBefore.sqs, cleanOrders),
  });
  printCost('clean path', clean, print);

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
    apiRequestsPerOrder: ratio(plan.length, ordersPlaced),
    lambdaInvocationsPerOrder: perOrder('lambdaInvocations'),
    lambdaGbSecondsPerOrder: gbSeconds(fnDefaultBefore, fnDefaultAfter, ordersPlaced),
    dynamoDb: unitsPerOrderByTable(defaultBefore, defaultAfter, ordersPlaced, label),
    sqsRequestsPerOrder: sqsChunks * perOrder('sqs'),
  });
  printCost(`default plan (${plan.length} requests for ${ordersPlaced} orders)`, defaultPlan, print);
  if (runtime.functions() === undefined)
    print('Lambda duration not measured: only a runtime the bench starts itself reports per-function time');
  print(`load average ${load()} at the end (${os.cpus().length} CPUs): figures are as measured on a shared machine`);

  return {
    emulatorLimit: limit,
    consumers: { ...consumers, stepRates },
    pipeline: { ...pipeline, plan: undefined, observations: undefined },
    api: {
      firstRequest: pipeline.firstRequest,
      firstRequestDynamoDbCalls: limit.createOrderRoundTrips,
      replay: replays,
      replayDynamoDbCallsPerRequest: replayCalls,
    },
    cost: {
      cleanPath: clean,
      defaultPlan,
      statsDelta: { clean: delta(statsBefore, statsAfter), defaultPlan: delta(defaultBefore, defaultAfter) },
    },
    closing: {
      pipelineOrdersPerSecond: pipeline.ordersPerSecond,
      emulatorLimitOrdersPerSecond: limit.ordersPerSecond,
      consumerMessagesPerSecond: consumers.ours.messagesPerSecond.first,
      peerMessagesPerSecond: consumers.peer.messagesPerSecond.first,
      consumerRoundTripsPerMessage: consumers.ours.roundTripsPerMessage.first,
      peerRoundTripsPerMessage: consumers.peer.roundTripsPerMessage.first,
      apiReplayP50Ms: replays.latency.p50,
      apiFirstRequestP50Ms: pipeline.firstRequest.p50,
      cleanPathCostPerMillion: clean.totalPerMillionOrders,
      defaultPlanCostPerMillion: defaultPlan.totalPerMillionOrders,
    },
  };
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

function printCost(name: string, cost: CostBreakdown, print: (line: string) => void): void {
  const parts = cost.components.map(
    (c) =>
      `${c.component} ${c.unitsPerOrder.toFixed(c.unitsPerOrder < 0.1 ? 4 : 2)}/order = $${c.dollarsPerMillionOrders.toFixed(2)}`,
  );
  print(`cost ${name}: $${cost.totalPerMillionOrders.toFixed(2)} per million orders = ${parts.join('; ')}`);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('bench failed:', error);
    process.exit(1);
  },
);
