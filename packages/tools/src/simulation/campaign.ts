// First: Powertools reads its settings when it loads.
import './world/quiet-powertools';
import type { SimulationOptionsBase as SimulationOptions, SimulationResult, SimulationWorld } from './contract';

/**
 * A campaign: many independent schedules (one seed each) of a few hundred
 * intents, each with its own fault mix drawn from its seed. Stops at the first
 * schedule that violates an invariant, shrinks it and explains it.
 */
export interface CampaignOptions {
  intents: number;
  intentsPerSchedule: number;
  firstSeed: number;
  /** The schedules to run, in this order; default campaignSchedules(intents, intentsPerSchedule, firstSeed). */
  schedules?: readonly Schedule[];
  base?: Partial<Omit<SimulationOptions, 'seed' | 'intents'>>;
  onProgress?: (done: { schedules: number; intents: number }) => void;
  /** The world simulated: the domain's, as the entry point loaded it. */
  world: SimulationWorld;
}

export interface CampaignReport {
  schedules: number;
  intents: number;
  requests: number;
  events: number;
  wallSeconds: number;
  cpuSeconds: number;
  faults: Record<string, number>;
  consequences: Record<string, number>;
  failure?: FailureReport;
}

export interface FailureReport {
  seed: number;
  intents: number;
  violations: string[];
  /** Options that reproduce the shrunk failure with `npm run sim -- --seed`. */
  replay: string;
  traceHash: string;
  /** The trace lines that mention what the first violation names. */
  trace: string[];
}

/** One schedule of a campaign: its seed and how many intents it sends. */
export interface Schedule {
  seed: number;
  intents: number;
}

/** Seeds S, S+1, ... of K intents each (the last one fewer) until N intents: the campaign's schedules, in order. */
export function campaignSchedules(intents: number, intentsPerSchedule: number, firstSeed: number): Schedule[] {
  const schedules: Schedule[] = [];
  for (let done = 0, seed = firstSeed; done < intents; seed++) {
    const count = Math.min(intentsPerSchedule, intents - done);
    schedules.push({ seed, intents: count });
    done += count;
  }
  return schedules;
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignReport> {
  const started = Date.now();
  const cpu = process.cpuUsage();
  const report = emptyReport();
  const schedules =
    options.schedules ?? campaignSchedules(options.intents, options.intentsPerSchedule, options.firstSeed);
  const { world } = options;
  for (const { seed, intents } of schedules) {
    const result = await world.simulate(world.options({ ...options.base, seed, intents }));
    report.schedules += 1;
    report.intents += intents;
    report.requests += result.requests;
    report.events += result.events;
    addCounts(report.faults, result.faults);
    addCounts(report.consequences, result.consequences);
    options.onProgress?.({ schedules: report.schedules, intents: report.intents });
    if (failed(result)) {
      report.failure = await explain(world.options({ ...options.base, seed, intents }), world);
      break;
    }
  }
  const used = process.cpuUsage(cpu);
  report.wallSeconds = (Date.now() - started) / 1000;
  report.cpuSeconds = (used.user + used.system) / 1e6;
  return report;
}

/**
 * The reports of campaigns that ran disjoint parts of one schedule list side
 * by side (`npm run sim -- --jobs N`), as one: counts added, CPU seconds added,
 * the wall clock the caller measured. Each part stops at its own first failing
 * schedule, having run all of its schedules before it, so the failure with the
 * lowest seed is the one a single campaign would have stopped at: the result
 * does not depend on how the schedules were shared out.
 */
export function mergeCampaignReports(parts: readonly CampaignReport[], wallSeconds: number): CampaignReport {
  const merged = { ...emptyReport(), wallSeconds };
  for (const part of parts) {
    merged.schedules += part.schedules;
    merged.intents += part.intents;
    merged.requests += part.requests;
    merged.events += part.events;
    merged.cpuSeconds += part.cpuSeconds;
    addCounts(merged.faults, part.faults);
    addCounts(merged.consequences, part.consequences);
  }
  const failures = parts.flatMap((part) => (part.failure === undefined ? [] : [part.failure]));
  merged.failure = failures.sort((a, b) => a.seed - b.seed)[0];
  return merged;
}

function emptyReport(): CampaignReport {
  return {
    schedules: 0,
    intents: 0,
    requests: 0,
    events: 0,
    wallSeconds: 0,
    cpuSeconds: 0,
    faults: {},
    consequences: {},
  };
}

/** Adds each kind's count of `from` to `into`. */
function addCounts(into: Record<string, number>, from: Readonly<Record<string, number>>): void {
  for (const [kind, count] of Object.entries(from)) into[kind] = (into[kind] ?? 0) + count;
}

export function failed(result: SimulationResult): boolean {
  return result.verification.violations.length > 0 || result.unexpectedErrors.length > 0;
}

/**
 * Shrinks a failing schedule (fewer intents, then fault kinds switched off one
 * by one, while it still fails), then replays the smallest one keeping the full
 * trace and picks the lines about what the first violation names.
 */
export async function explain(failing: SimulationOptions, world: SimulationWorld): Promise<FailureReport> {
  let smallest = failing;
  for (let intents = Math.floor(failing.intents / 2); intents >= 1; intents = Math.floor(intents / 2)) {
    const candidate = { ...smallest, intents };
    if (!failed(await world.simulate(candidate))) break;
    smallest = candidate;
  }
  for (const kind of Object.keys(smallest.faults)) {
    if (typeof smallest.faults[kind] !== 'number' || smallest.faults[kind] === 0) continue;
    const candidate = { ...smallest, faults: { ...smallest.faults, [kind]: 0 } };
    if (failed(await world.simulate(candidate))) smallest = candidate;
  }
  const result = await world.simulate({ ...smallest, keepTrace: Number.MAX_SAFE_INTEGER });
  const violations = [
    ...result.verification.violations.map((v) => `${v.invariant}: ${v.detail}`),
    ...result.unexpectedErrors.map((e) => `unexpected error: ${e}`),
  ];
  const ids = new Set(world.idsIn(violations[0] ?? ''));
  const trace = result.trace.filter((line) => [...ids].some((id) => line.includes(id)));
  return {
    seed: smallest.seed,
    intents: smallest.intents,
    violations,
    replay: replayArguments(smallest, world),
    traceHash: result.traceHash,
    trace: trace.length > 0 ? trace : result.trace.slice(-60),
  };
}

/** The command-line arguments that rebuild these options (see cli.ts). */
export function replayArguments(options: SimulationOptions, world: SimulationWorld): string {
  const defaults = world.options({ seed: options.seed });
  const args = [`--seed ${options.seed}`, `--intents ${options.intents}`];
  for (const [kind, rate] of Object.entries(options.faults)) {
    const standard = defaults.faults[kind];
    if (JSON.stringify(rate) !== JSON.stringify(standard)) args.push(`--fault ${kind}=${JSON.stringify(rate)}`);
  }
  for (const [guard, value] of Object.entries(options.guards)) {
    if (value !== defaults.guards[guard]) args.push(`--guard ${guard}=${String(value)}`);
  }
  if (options.redriveDlqsAfterSeconds === undefined) args.push('--no-redrive');
  else if (options.redriveDlqsAfterSeconds !== defaults.redriveDlqsAfterSeconds)
    args.push(`--redrive-after ${options.redriveDlqsAfterSeconds}`);
  if (options.longRedrive !== undefined)
    args.push(`--long-redrive ${options.longRedrive.redrives},${options.longRedrive.everyDays}`);
  if (options.cancelChance !== defaults.cancelChance) args.push(`--cancels ${options.cancelChance}`);
  return args.join(' ');
}

export function formatFailure(failure: FailureReport): string {
  return [
    `VIOLATION in schedule seed ${failure.seed} (${failure.intents} intents after shrinking)`,
    ...failure.violations.slice(0, 10).map((v) => `  - ${v}`),
    `replay: npm run sim -- ${failure.replay}   (trace hash ${failure.traceHash})`,
    'trace of what the first violation names:',
    ...failure.trace.slice(-80).map((line) => `  ${line}`),
  ].join('\n');
}
