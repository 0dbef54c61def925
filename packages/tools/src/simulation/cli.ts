import '../cli/require-node'; // an unsupported Node stops here, before anything loads
// Then: Powertools reads its settings when it loads.
import './world/quiet-powertools';
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { EXIT, exitStatusOf, isUsageError, parseCommandLine, UsageError } from '../cli/exit';
import {
  campaignSchedules,
  formatFailure,
  mergeCampaignReports,
  runCampaign,
  type CampaignOptions,
  type CampaignReport,
  type Schedule,
} from './campaign';
import { simulationWorldOf } from '../domain-parts';
import type { ExampleTooling } from '../domain';
import { loadDomain } from '../load-domain';
import { takeToolingFlag, toolingFlagHelp } from '../cli/tooling-flag';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';
import type { SimulationWorld } from './contract';
import { OPTIONAL_FAULTS } from './world/world';

/**
 * npm run sim -- [--intents N] [--seed S] [--per-schedule K] [--fault kind=value]... [--guard name=value]...
 *                [--redrive-after SECONDS | --no-redrive | --long-redrive N,DAYS] [--cancels SHARE] [--trace] [--jobs J]
 *
 * Runs schedules S, S+1, ... of K intents each (default 200) until N intents are
 * simulated (default 10,000), and prints intents per second, schedules explored
 * and faults injected by kind; an intent is one new entity of the domain asked for
 * (the help and the summary name them with the domain's noun: the shop's orders).
 * `--orders N` is `--intents N` under the shop's word. With N <= K it runs the one
 * schedule S: that is how a failure's seed is replayed (`--trace` prints its whole trace).
 * The operator redrives both DLQs an hour after the last intent by default;
 * `--long-redrive 4,13` instead redrives them 4 times, every 13 days (weeks of
 * virtual time, with DynamoDB's TTL deleting expired inbox claims: keep the
 * intents few, and make something fail for weeks, e.g. `--fault providerOutages=1
 * --fault longOutageChance=1 --fault longOutageSeconds=[5184000,5184000]`).
 * Exits 1 on a violation, after printing the shrunk failure and its replay command.
 *
 * The schedules are independent, so they run in J processes side by side
 * (default: one per core): each takes every J-th schedule, and the reports are
 * added up. Each schedule's outcome depends on its seed alone, so the totals and
 * the failure reported are those of one process (`--jobs 1`) running them all.
 */
const usage = (noun: string) => `Usage: npm run sim -- [options]
  Runs schedules S, S+1, ... of K intents each (an intent: one of the domain's ${noun}, asked for) until N
  are simulated, in virtual time, and prints ${noun} per second, schedules explored, faults injected and their
  consequences by kind. With N <= K it runs the one schedule S: that is how a failure's seed is replayed
  (with --trace, its whole trace).
  --intents N              intents to simulate: new ${noun} (default 10000); --orders N is the same setting
  --seed S                 the first schedule's seed (default 1)
  --per-schedule K         intents per schedule (default 200)
  --fault KIND=VALUE       a fault setting (JSON value; repeat the flag), e.g. --fault providerOutages=1
  --guard NAME=VALUE       switch a guard off or change it, to see the simulation notice (repeat the flag)
  --redrive-after SECONDS  the operator redrives the DLQs this long after the last intent (default: an hour)
  --no-redrive             nobody redrives the DLQs
  --long-redrive N,DAYS    instead: N redrives, every DAYS days (weeks of virtual time, TTL deleting claims)
  --cancels SHARE          the share of ${noun} changed later (the shop's: cancelled), between 0 and 1
  --trace                  print the whole trace of the one schedule (replaying a failure)
  --jobs J                 processes side by side (default: one per core); the totals are those of one
  ${toolingFlagHelp(25)}
  -h, --help               this text
Exit codes: 0 every invariant held, 1 a violation (the shrunk failure and its replay command printed), 2 usage error.`;

/**
 * The domain's plural noun for what an intent asks for (its proof domain's `entityNoun`: the shop's
 * "orders"), for the help and the summary; "intents" where the tooling names none or does not load.
 */
function domainNoun(domain: () => ExampleTooling): string {
  try {
    return domain().proof?.entityNoun ?? 'intents';
  } catch {
    return 'intents';
  }
}

/** `--tooling` split off the command line, and the domain it names, loaded on first use (the help may not need it). */
function commandLineDomain(argv: readonly string[]): { args: string[]; domain: () => ExampleTooling } {
  const { toolingModule, args } = takeToolingFlag(argv);
  let loaded: ExampleTooling | undefined;
  return { args, domain: () => (loaded ??= loadDomain(PROJECT_DIR, { toolingModule })) };
}

function parse(argv: string[], world: SimulationWorld) {
  const { values } = parseCommandLine(() =>
    parseArgs({
      args: argv,
      options: {
        intents: { type: 'string' },
        // The shop's word for the same setting, kept for the commands already written with it.
        orders: { type: 'string' },
        seed: { type: 'string' },
        'per-schedule': { type: 'string' },
        trace: { type: 'boolean', default: false },
        jobs: { type: 'string' },
        // Internal: a child process of --jobs, given its share of the schedules.
        part: { type: 'string' },
        'redrive-after': { type: 'string' },
        'no-redrive': { type: 'boolean', default: false },
        'long-redrive': { type: 'string' },
        cancels: { type: 'string' },
        fault: { type: 'string', multiple: true },
        guard: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }),
  );
  const integer = (flag: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${flag} needs a non-negative integer, got "${value}"`);
    return n;
  };
  const defaults = world.options({ seed: 1 });
  const faults: Record<string, unknown> = { ...defaults.faults };
  let guards: Record<string, unknown> = { ...defaults.guards };
  // Faults that are off unless named (their default is undefined, so not among the defaults' keys).
  const knownFaults = [...new Set([...Object.keys(faults), ...OPTIONAL_FAULTS])];
  for (const setting of values.fault ?? []) {
    const [kind, raw] = setting.split('=');
    if (!knownFaults.includes(kind)) throw new UsageError(`unknown fault ${kind}; known: ${knownFaults.join(', ')}`);
    try {
      faults[kind] = JSON.parse(raw);
    } catch {
      throw new UsageError(`--fault ${kind} needs a JSON value after "=", got "${raw}"`);
    }
  }
  for (const setting of values.guard ?? []) {
    const [name, raw] = setting.split('=');
    try {
      guards = world.withGuard(guards, name, raw);
    } catch (error) {
      throw new UsageError(`--guard ${setting}: ${(error as Error).message}`);
    }
  }
  if (values.intents !== undefined && values.orders !== undefined)
    throw new UsageError('Give --intents or --orders, not both: they are one setting');
  if (values['no-redrive'] && values['redrive-after'] !== undefined)
    throw new UsageError('--redrive-after and --no-redrive exclude each other');
  let longRedrive: { redrives: number; everyDays: number } | undefined;
  if (values['long-redrive'] !== undefined) {
    const [redrives, everyDays] = values['long-redrive'].split(',').map(Number);
    if (!(Number.isInteger(redrives) && redrives > 0 && everyDays > 0))
      throw new UsageError('--long-redrive needs REDRIVES,DAYS (e.g. 4,13)');
    longRedrive = { redrives, everyDays };
  }
  let cancels: number | undefined;
  if (values.cancels !== undefined) {
    cancels = Number(values.cancels);
    if (!(cancels >= 0 && cancels <= 1)) throw new UsageError('--cancels needs a share between 0 and 1');
  }
  return {
    intents:
      values.orders !== undefined
        ? integer('orders', values.orders, 10_000)
        : integer('intents', values.intents, 10_000),
    seed: integer('seed', values.seed, 1),
    perSchedule: Math.max(1, integer('per-schedule', values['per-schedule'], 200)),
    trace: values.trace ?? false,
    jobs: Math.max(1, integer('jobs', values.jobs, availableParallelism())),
    part: values.part === undefined ? undefined : (JSON.parse(values.part) as Schedule[]),
    redriveAfter: values['no-redrive']
      ? undefined
      : values['redrive-after'] !== undefined
        ? integer('redrive-after', values['redrive-after'], 0)
        : (world.defaultRedriveAfterSeconds as number | undefined),
    longRedrive,
    cancels,
    faults,
    guards,
  };
}

async function main(argv: string[], domain: () => ExampleTooling): Promise<number> {
  // The help needs no world: it answers before the domain's simulation loads.
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usage(domainNoun(domain)));
    return EXIT.ok;
  }
  const world = await simulationWorldOf(domain());
  const noun = domainNoun(domain);
  const { intents, seed, perSchedule, trace, jobs, part, faults, guards, redriveAfter, longRedrive, cancels } = parse(
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
        intents,
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
    world,
    intents,
    intentsPerSchedule: perSchedule,
    firstSeed: seed,
    base: { faults, guards, redriveDlqsAfterSeconds: redriveAfter, ...mix },
    onProgress: ({ schedules, intents: done }) => {
      if (schedules % 25 === 0) process.stderr.write(`  ${done} ${noun}, ${schedules} schedules\n`);
    },
  };
  if (part !== undefined) {
    console.log(PART_REPORT + JSON.stringify(await runCampaign({ ...campaign, schedules: part })));
    return 0;
  }
  const schedules = campaignSchedules(intents, perSchedule, seed);
  const report =
    Math.min(jobs, schedules.length) <= 1
      ? await runCampaign(campaign)
      : await runInParallel(schedules, Math.min(jobs, schedules.length), process.argv.slice(2));
  console.log(
    `simulated ${report.intents} ${noun} (${report.requests} API requests) in ${report.schedules} schedules, seeds ${seed}..${seed + report.schedules - 1}`,
  );
  console.log(
    `  ${(report.intents / report.wallSeconds).toFixed(0)} ${noun}/s wall clock (${report.wallSeconds.toFixed(1)} s), ` +
      `${(report.intents / report.cpuSeconds).toFixed(0)} ${noun} per CPU second, ${report.events} scheduled events`,
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

let commandLine: ReturnType<typeof commandLineDomain> | undefined;
new Promise<ReturnType<typeof commandLineDomain>>((resolve) => resolve(commandLineDomain(process.argv.slice(2))))
  .then((parsed) => {
    commandLine = parsed;
    return main(parsed.args, parsed.domain);
  })
  .then(exitAfterOutput, (error) => {
    const message = error instanceof Error ? error.message : String(error);
    const noun = commandLine === undefined ? 'intents' : domainNoun(commandLine.domain);
    console.error(isUsageError(error) ? `${message}\n\n${usage(noun)}` : `sim: ${message}`);
    exitAfterOutput(exitStatusOf(error));
  });
