// First: Powertools reads its settings when it loads, and the handler modules their environment.
import './world/environment';
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import {
  campaignSchedules,
  formatFailure,
  mergeCampaignReports,
  runCampaign,
  type CampaignOptions,
  type CampaignReport,
  type Schedule,
} from './campaign';
import { simulationWorld } from '../example';
import type { SimulationWorld } from './contract';
import { OPTIONAL_FAULTS } from './world/world';

/**
 * npm run sim -- [--orders N] [--seed S] [--per-schedule K] [--fault kind=value]... [--guard name=value]...
 *                [--redrive-after SECONDS | --no-redrive | --long-redrive N,DAYS] [--cancels SHARE] [--trace] [--jobs J]
 *
 * Runs schedules S, S+1, ... of K orders each (default 200) until N orders are
 * simulated (default 10,000), and prints orders per second, schedules explored
 * and faults injected by kind. With N <= K it runs the one schedule S: that is
 * how a failure's seed is replayed (`--trace` prints its whole trace).
 * The operator redrives both DLQs an hour after the last order by default;
 * `--long-redrive 4,13` instead redrives them 4 times, every 13 days (weeks of
 * virtual time, with DynamoDB's TTL deleting expired inbox claims: keep the
 * orders few, and make something fail for weeks, e.g. `--fault providerOutages=1
 * --fault longOutageChance=1 --fault longOutageSeconds=[5184000,5184000]`).
 * Exits 1 on a violation, after printing the shrunk failure and its replay command.
 *
 * The schedules are independent, so they run in J processes side by side
 * (default: one per core): each takes every J-th schedule, and the reports are
 * added up. Each schedule's outcome depends on its seed alone, so the totals and
 * the failure reported are those of one process (`--jobs 1`) running them all.
 */
function parse(argv: string[], world: SimulationWorld) {
  const options = {
    orders: 10_000,
    seed: 1,
    perSchedule: 200,
    trace: false,
    jobs: availableParallelism(),
    part: undefined as Schedule[] | undefined,
    redriveAfter: world.defaultRedriveAfterSeconds as number | undefined,
    longRedrive: undefined as { redrives: number; everyDays: number } | undefined,
    cancels: undefined as number | undefined,
  };
  const defaults = world.options({ seed: 1 });
  const faults: Record<string, unknown> = { ...defaults.faults };
  let guards: Record<string, unknown> = { ...defaults.guards };
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
    else if (flag === '--jobs') options.jobs = Math.max(1, integer());
    // Internal: a child process of --jobs, given its share of the schedules.
    else if (flag === '--part') options.part = JSON.parse(value()) as Schedule[];
    else if (flag === '--redrive-after') options.redriveAfter = integer();
    else if (flag === '--no-redrive') options.redriveAfter = undefined;
    else if (flag === '--long-redrive') {
      const [redrives, everyDays] = value().split(',').map(Number);
      if (!(Number.isInteger(redrives) && redrives > 0 && everyDays > 0))
        throw new Error('--long-redrive needs REDRIVES,DAYS (e.g. 4,13)');
      options.longRedrive = { redrives, everyDays };
    } else if (flag === '--cancels') {
      const rate = Number(value());
      if (!(rate >= 0 && rate <= 1)) throw new Error('--cancels needs a share between 0 and 1');
      options.cancels = rate;
    } else if (flag === '--fault') {
      const [kind, raw] = value().split('=');
      const known = [...new Set([...Object.keys(faults), ...OPTIONAL_FAULTS])];
      if (!known.includes(kind)) throw new Error(`unknown fault ${kind}; known: ${known.join(', ')}`);
      faults[kind] = JSON.parse(raw);
    } else if (flag === '--guard') {
      const [name, raw] = value().split('=');
      guards = world.withGuard(guards, name, raw);
    } else throw new Error(`unknown argument ${flag}`);
  }
  return { ...options, faults, guards };
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const world = await simulationWorld();
  const { orders, seed, perSchedule, trace, jobs, part, faults, guards, redriveAfter, longRedrive, cancels } = parse(
    argv,
    world,
  );
  const mix = {
    ...(cancels === undefined ? {} : { cancelChance: cancels }),
    ...(longRedrive === undefined ? {} : { longRedrive }),
  };
  if (trace) {
    const result = await world.simulate(
      world.options({
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
  const campaign: CampaignOptions = {
    orders,
    ordersPerSchedule: perSchedule,
    firstSeed: seed,
    base: { faults, guards, redriveDlqsAfterSeconds: redriveAfter, ...mix },
    onProgress: ({ schedules, orders: done }) => {
      if (schedules % 25 === 0) process.stderr.write(`  ${done} orders, ${schedules} schedules\n`);
    },
  };
  if (part !== undefined) {
    console.log(PART_REPORT + JSON.stringify(await runCampaign({ ...campaign, schedules: part })));
    return 0;
  }
  const schedules = campaignSchedules(orders, perSchedule, seed);
  const report =
    Math.min(jobs, schedules.length) <= 1
      ? await runCampaign(campaign)
      : await runInParallel(schedules, Math.min(jobs, schedules.length), argv);
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

const PART_REPORT = 'campaign part report: ';

/** Every J-th schedule to each of J child processes running this CLI with `--part`; their reports added up. */
async function runInParallel(schedules: Schedule[], jobs: number, argv: string[]): Promise<CampaignReport> {
  const started = Date.now();
  const parts = Array.from({ length: jobs }, (_, j) => schedules.filter((_, i) => i % jobs === j));
  const reports = await Promise.all(parts.map((part) => runPart(part, argv)));
  return mergeCampaignReports(reports, (Date.now() - started) / 1000);
}

function runPart(part: Schedule[], argv: string[]): Promise<CampaignReport> {
  return new Promise((resolve, reject) => {
    // The same node, loader flags (tsx) and script as this process.
    const child = spawn(
      process.execPath,
      [...process.execArgv, process.argv[1], ...argv, '--part', JSON.stringify(part)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith(PART_REPORT));
      if (code !== 0 || line === undefined) reject(new Error(`a campaign part exited with ${code}: ${stdout}`));
      else resolve(JSON.parse(line.slice(PART_REPORT.length)) as CampaignReport);
    });
  });
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
