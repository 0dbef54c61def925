import { formatFailure, runCampaign } from './campaign';
import {
  simulate,
  simulationOptions,
  ALL_GUARDS,
  DEFAULT_FAULTS,
  DEFAULT_REDRIVE_AFTER_SECONDS,
  type FaultRates,
  type Guards,
} from './world/world';

/**
 * npm run sim -- [--orders N] [--seed S] [--per-schedule K] [--fault kind=value]... [--guard name=value]...
 *                [--redrive-after SECONDS | --no-redrive] [--cancels SHARE] [--trace]
 *
 * Runs schedules S, S+1, ... of K orders each (default 200) until N orders are
 * simulated (default 10,000), and prints orders per second, schedules explored
 * and faults injected by kind. With N <= K it runs the one schedule S: that is
 * how a failure's seed is replayed (`--trace` prints its whole trace).
 * The operator redrives both DLQs an hour after the last order by default.
 * Exits 1 on a violation, after printing the shrunk failure and its replay command.
 */
function parse(argv: string[]) {
  const options = {
    orders: 10_000,
    seed: 1,
    perSchedule: 200,
    trace: false,
    redriveAfter: DEFAULT_REDRIVE_AFTER_SECONDS as number | undefined,
    cancels: undefined as number | undefined,
  };
  const faults: FaultRates = { ...DEFAULT_FAULTS };
  const guards: Guards = { ...ALL_GUARDS };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    };
    const integer = () => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} needs a non-negative integer`);
      return n;
    };
    if (flag === '--orders') options.orders = integer();
    else if (flag === '--seed') options.seed = integer();
    else if (flag === '--per-schedule') options.perSchedule = Math.max(1, integer());
    else if (flag === '--trace') options.trace = true;
    else if (flag === '--redrive-after') options.redriveAfter = integer();
    else if (flag === '--no-redrive') options.redriveAfter = undefined;
    else if (flag === '--cancels') {
      const rate = Number(value());
      if (!(rate >= 0 && rate <= 1)) throw new Error('--cancels needs a share between 0 and 1');
      options.cancels = rate;
    } else if (flag === '--fault') {
      const [kind, raw] = value().split('=');
      if (!(kind in faults)) throw new Error(`unknown fault ${kind}; known: ${Object.keys(faults).join(', ')}`);
      (faults as unknown as Record<string, unknown>)[kind] = JSON.parse(raw);
    } else if (flag === '--guard') {
      const [name, raw] = value().split('=');
      if (name === 'dedupeOn' && (raw === 'eventId' || raw === 'messageId')) guards.dedupeOn = raw;
      else if (name === 'callerScope' && (raw === 'principal' || raw === 'session')) guards.callerScope = raw;
      else if (name === 'retryBudget' && (raw === 'budget' || raw === 'seconds')) guards.retryBudget = raw;
      else if (
        name === 'apiIdempotency' &&
        (raw === 'powertools' || raw === 'no-payload-validation' || raw === 'bypassed')
      )
        guards.apiIdempotency = raw;
      else if (
        (name === 'inboxClaim' || name === 'versionCheck' || name === 'providerCompletion') &&
        (raw === 'true' || raw === 'false')
      )
        guards[name] = raw === 'true';
      else
        throw new Error(
          `unknown guard setting ${name}=${raw}; known: inboxClaim, versionCheck, providerCompletion (true|false), ` +
            'dedupeOn (eventId|messageId), callerScope (principal|session), retryBudget (budget|seconds), ' +
            'apiIdempotency (powertools|no-payload-validation|bypassed)',
        );
    } else throw new Error(`unknown argument ${flag}`);
  }
  return { ...options, faults, guards };
}

async function main(): Promise<number> {
  const { orders, seed, perSchedule, trace, faults, guards, redriveAfter, cancels } = parse(process.argv.slice(2));
  const mix = cancels === undefined ? {} : { cancelChance: cancels };
  if (trace) {
    const result = await simulate(
      simulationOptions({
        seed,
        orders,
        faults,
        guards,
        redriveDlqsAfterSeconds: redriveAfter,
        ...mix,
        keepTrace: Number.MAX_SAFE_INTEGER,
      }),
    );
    for (const line of result.trace) console.log(line);
    console.log(`trace hash ${result.traceHash}; violations: ${result.verification.violations.length}`);
    for (const v of result.verification.violations) console.log(`  - ${v.invariant}: ${v.detail}`);
    return result.verification.violations.length > 0 ? 1 : 0;
  }
  const report = await runCampaign({
    orders,
    ordersPerSchedule: perSchedule,
    firstSeed: seed,
    base: { faults, guards, redriveDlqsAfterSeconds: redriveAfter, ...mix },
    onProgress: ({ schedules, orders: done }) => {
      if (schedules % 25 === 0) process.stderr.write(`  ${done} orders, ${schedules} schedules\n`);
    },
  });
  console.log(
    `simulated ${report.orders} orders (${report.requests} API requests) in ${report.schedules} schedules, seeds ${seed}..${seed + report.schedules - 1}`,
  );
  console.log(
    `  ${(report.orders / report.wallSeconds).toFixed(0)} orders/s wall clock (${report.wallSeconds.toFixed(1)} s), ` +
      `${(report.orders / report.cpuSeconds).toFixed(0)} orders per CPU second, ${report.events} scheduled events`,
  );
  console.log('  faults injected by kind:');
  for (const [kind, count] of Object.entries(report.faults).sort()) console.log(`    ${kind.padEnd(26)} ${count}`);
  console.log('  consequences by kind:');
  for (const [kind, count] of Object.entries(report.consequences).sort())
    console.log(`    ${kind.padEnd(26)} ${count}`);
  if (report.failure !== undefined) {
    console.log(formatFailure(report.failure));
    return 1;
  }
  console.log('  every invariant held');
  return 0;
}

/**
 * Exits once stdout has taken everything: into a pipe (`| less`, `| grep`) the
 * writes queue up, and exiting at once would cut a long `--trace` short.
 */
function exitAfterOutput(code: number): void {
  process.stdout.write('', () => process.exit(code));
}

main().then(exitAfterOutput, (error) => {
  console.error(error instanceof Error ? error.message : error);
  exitAfterOutput(2);
});
