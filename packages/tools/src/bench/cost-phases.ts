import { API_KEY_CACHE_SECONDS } from '@exactly-once/runtime/aws/parameter-api-key';
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
import {
  awsLatencyCostLine,
  awsRepresentativeDuration,
  functionSqsCallsPerOrder,
  gbSecondsPerOrder,
  unitsByTable,
  unitsPerOrderByTable,
} from './cost-model';
import { ratio } from './figures';
import { outboxItemsOf } from './hops';
import { idleCost, idleCostLine, type ScheduledMeasurement } from './idle-cost';
import { benchPlan, drivePlan } from './pipeline';
import type { BenchFunction, BenchRuntime } from './runtime';
import type { BenchContext, BenchLimit } from './bench-context';
import type { CleanPipeline } from './pipeline-phases';

/**
 * The cost phases, after the pipeline: the clean path from what the runtime counted around the clean
 * pipeline, the proof kit's default plan mix measured, the idle cost; then the prices' date.
 */
export async function measureCosts(ctx: BenchContext, clean: CleanPipeline, limit: BenchLimit) {
  const sqsChunks = await largestSqsRequestChunks(ctx, clean);
  const cleanPath = cleanPathCost(ctx, clean, limit, sqsChunks);
  const defaultPlan = await defaultPlanCost(ctx, sqsChunks);
  const { runtime, print } = ctx;
  // Idle cost: the template's fixed items, and one scheduled invocation measured while nothing else runs.
  const idle = runtime.template === undefined ? undefined : idleCost(runtime.template, await measureScheduled(runtime));
  if (idle === undefined) print('idle cost not computed: no synthesized template (cdk.out) found');
  else console.log(idleCostLine(idle));
  print(`prices: ${UNIT_PRICES.asOf}`);
  return {
    record: {
      cleanPath,
      defaultPlan: defaultPlan.cost,
      idle,
      statsDelta: {
        clean: delta(clean.statsBefore, clean.statsAfter),
        defaultPlan: delta(defaultPlan.before, defaultPlan.after),
      },
    },
  };
}

/**
 * SQS bills each 64 KB of a request as one request: a full batch of ten of the largest events the
 * pipeline produced (as the outbox holds them) is the largest request sent.
 */
async function largestSqsRequestChunks({ runtime, domain, tables }: BenchContext, { pipeline }: CleanPipeline) {
  const sampled = acceptedIntents(pipeline.plan, pipeline.observations, domain).slice(0, 50);
  const outboxed = await outboxItemsOf(
    runtime.target,
    tables.entities,
    sampled.map((a) => a.eventId),
  );
  const eventBytes = Math.max(0, ...[...outboxed.values()].map((item) => item.eventBytes));
  return sqsBilledRequests(10 * eventBytes);
}

/**
 * Cost, clean path: one POST per entity, effects applied, no retries; DynamoDB as the runtime's
 * counting proxy saw the stack's functions use it (the domain's own effects included).
 */
function cleanPathCost(
  { domain, print, consumerSpecs, label }: BenchContext,
  { pipeline, statsBefore, statsAfter, fnBefore, fnAfter }: CleanPipeline,
  limit: BenchLimit,
  sqsChunks: number,
): CostBreakdown {
  const { entityNoun: orders, entityNounSingular: order } = domain;
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
  return clean;
}

/** Cost, the proof kit's default plan mix (retries, cancels, reads), measured. */
async function defaultPlanCost({ runtime, domain, profile, print, label }: BenchContext, sqsChunks: number) {
  const { target } = runtime;
  const { entityNoun: orders, entityNounSingular: order } = domain;
  const before = await runtime.stats();
  const fnDefaultBefore = runtime.functions();
  const plan = benchPlan(target, profile.defaultPlanOrders, DEFAULT_MIX, 12);
  const driven = await drivePlan(target, plan, profile.connections);
  await waitForDrain(target, { timeoutMs: profile.drainTimeoutMs, pollMs: 250 });
  const after = await runtime.stats();
  const fnDefaultAfter = runtime.functions();
  const ordersPlaced = new Set(
    driven.observations.filter((o) => o.status === 201 && !o.replayed).map((o) => plan[o.index].idempotencyKey),
  ).size;
  const perOrder = (key: 'dynamodbWrites' | 'dynamodbReads' | 'sqs' | 'lambdaInvocations') =>
    ratio(after[key] - before[key], ordersPlaced);
  const cost = costBreakdown({
    apiRequestsPerEntity: ratio(plan.length, ordersPlaced),
    lambdaInvocationsPerEntity: perOrder('lambdaInvocations'),
    lambdaGbSecondsPerEntity: gbSeconds(fnDefaultBefore, fnDefaultAfter, ordersPlaced),
    dynamoDb: unitsPerOrderByTable(before, after, ordersPlaced, label),
    sqsRequestsPerEntity: sqsChunks * perOrder('sqs'),
  });
  printCost(`default plan (${plan.length} requests for ${ordersPlaced} ${orders})`, cost, print, order, orders);
  if (runtime.functions() === undefined)
    print('Lambda duration not measured: only a runtime the bench starts itself reports per-function time');
  return { cost, before, after };
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
