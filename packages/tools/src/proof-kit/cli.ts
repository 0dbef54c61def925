import '../cli/require-node'; // first: an unsupported Node stops here, before anything loads
import { assertLocalRuntimeAnswers, LOCAL_OUTPUTS_FILE, localStackOutputs } from '../stack';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { exitStatusOf, isUsageError, parseCommandLine, UsageError } from '../cli/exit';
import { accessDeniedLine } from '../cli/access-denied';
import { localCallCounters } from './local-counters';
import { capacityProblems, readCapacity } from './capacity';
import { readLedgers } from './intents';
import { DEFAULT_MIX, type Mix } from './plan';
import { terminalSummary, verdictLine, verdictOf, writeReports } from './report';
import { parseFaultRates, parseFaults, PROFILES, runLoadTest, verifyStack, type Profile } from './run';
import { awsTarget, localTarget, type Target } from './target';
import { loadDomain } from '../load-domain';
import { toolingFlagHelp } from '../cli/tooling-flag';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';

/**
 * `npm run loadtest -- [options]`: drives the API with a realistic mix, with
 * faults if asked, waits for the system to drain, verifies every exactly-once
 * invariant and exits non-zero on any violation.
 */
const USAGE = `Usage: npm run loadtest -- [options]
  --profile NAME                 smoke|default|hot-sku|soak: sizes and concurrency (default: default;
                                 hot-sku: the default load on one resource, e.g. at most 3 SKUs)
  --intents N                    new intents to send, e.g. orders to place (overrides the profile;
                                 --orders N is the same); with --verify-only: the intent ledgers (FILE...)
  --connections N                concurrent HTTP connections
  --rate N                       requests per second overall (default: as fast as possible)
  --seed N                       makes the request plan reproducible, and seeds the fault rolls
  --mix new=0.6,retrySequential=0.1,retryConcurrent=0.1,cancel=0.1,read=0.1
  --faults LIST|all|none         crash,slow,transient,poison,relay-crash,resend,clock-skew,redrive,provider-outage,
                                 and at the local provider: answer-lost,slow-answer,rate-limited,
                                 server-errors,keys-forgotten (default: none); never in all, by name only,
                                 each reported for a person, never passed: reused-id (applied events' ids
                                 reused with other content), forged-first (forged copies ahead of the events
                                 this run's creates produce), clock-skew-beyond (events stamped a day ahead)
  --fault-rate P                 probability per message, record or provider request of each fault (default 0.1);
                                 with all, the relay crash at 1: once per relay invocation that sends events first
  --slow-seconds S               how long the slow handler sleeps (default 8)
  --poison N                     poison messages per source queue (default 3)
  --provider-outage-seconds S    provider-outage: how long the providers are down in one window (from the
                                 first call, locally), besides failing a share (--fault-rate) of calls (default 10)
  --local-visibility S           local fault runs: source queues' visibility timeout during the run (default 5; 0 = as deployed)
  --local-backoff-cap S          local fault runs: the longest backoff after a failed try while the faults are on,
                                 a provider's Retry-After included (default 4; 0 = as deployed, 2 s doubling to 300 s)
  --stack NAME                   a deployed stack (outputs from CloudFormation, your AWS credentials)
  --verify-only                  send nothing: drain, then check the invariants (after an Artillery run or an
                                 FIS experiment; see docs/proof-kit.md). --intents FILE...: the generators'
                                 intent ledgers (INTENT_LEDGER), merged: one entity per accepted key, none for
                                 a refused one, and the effects of those; without, every entity's effects only
  --report-dir DIR               where the JSON and HTML reports go (default loadtest-results)
  --ignore-capacity              with --stack: send even if the account's Lambda concurrency or the stage's
                                 throttle cannot carry the load (checked first, refused with the numbers)
  ${toolingFlagHelp(31)}
  -h, --help                     this text
Exit codes: 0 every invariant held, 1 a violation or a failure, 2 usage error, 3 the local runtime is not running.`;

async function main(): Promise<number> {
  const { values, positionals } = parseCommandLine(() =>
    parseArgs({
      allowPositionals: true,
      options: {
        profile: { type: 'string', default: 'default' },
        intents: { type: 'string', multiple: true },
        orders: { type: 'string' },
        connections: { type: 'string' },
        rate: { type: 'string' },
        seed: { type: 'string' },
        mix: { type: 'string' },
        faults: { type: 'string', default: 'none' },
        'fault-rate': { type: 'string', default: '0.1' },
        'slow-seconds': { type: 'string', default: '8' },
        poison: { type: 'string', default: '3' },
        'provider-outage-seconds': { type: 'string', default: '10' },
        'local-visibility': { type: 'string', default: '5' },
        'local-backoff-cap': { type: 'string', default: '4' },
        stack: { type: 'string' },
        'report-dir': { type: 'string', default: 'loadtest-results' },
        'verify-only': { type: 'boolean' },
        'ignore-capacity': { type: 'boolean' },
        tooling: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }),
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const profileName = values.profile as keyof typeof PROFILES;
  if (!(profileName in PROFILES)) throw new UsageError(`Unknown profile ${values.profile}`);
  // With --verify-only, --intents names ledger files (the shell expands `--intents w-*.jsonl` into positionals).
  const ledgerFiles = values['verify-only'] ? [...(values.intents ?? []), ...positionals] : undefined;
  if (!values['verify-only'] && positionals.length > 0) throw new UsageError(`Unexpected argument ${positionals[0]}`);
  if (!values['verify-only'] && (values.intents?.length ?? 0) > 1)
    throw new UsageError('Give --intents once: it is a count (ledger files only with --verify-only)');
  const intentCount = values['verify-only'] ? undefined : values.intents?.[0];
  if (values.orders && intentCount) throw new UsageError('Give --intents or --orders, not both: they are one setting');
  const profile = {
    ...PROFILES[profileName],
    ...(values.orders ? { intents: positiveInt(values.orders, '--orders') } : {}),
    ...(intentCount ? { intents: positiveInt(intentCount, '--intents') } : {}),
    ...(values.connections ? { connections: positiveInt(values.connections, '--connections') } : {}),
    ...(values.rate ? { rate: positiveInt(values.rate, '--rate') } : {}),
  };
  const seed = values.seed ? positiveInt(values.seed, '--seed') : Date.now() % 2 ** 31;
  // The domain, once: the target carries it to every step of the run.
  const domain = loadDomain(PROJECT_DIR, { toolingModule: values.tooling });
  const target = values.stack ? await awsTarget(values.stack, domain) : localTarget({ domain });
  if (target.kind === 'local') await assertLocalRuntimeAnswers(localStackOutputs(), LOCAL_OUTPUTS_FILE, target.apiUrl);
  const tty = process.stdout.isTTY;
  if (values['verify-only']) return verifyOnly(target, profile.drainTimeoutMs, ledgerFiles);
  if (target.kind === 'aws' && !values['ignore-capacity']) await refuseLoadBeyondCapacity(target, profile);
  try {
    const results = await runLoadTest({
      target,
      profileName,
      profile,
      mix: values.mix ? parseMix(values.mix) : DEFAULT_MIX,
      seed,
      faults: {
        enabled: parseFaults(values.faults),
        rate: Number(values['fault-rate']),
        rates: parseFaultRates(values.faults),
        slowSeconds: Number(values['slow-seconds']),
        poisonPerQueue: positiveInt(values.poison!, '--poison', true),
        localVisibilitySeconds: positiveInt(values['local-visibility']!, '--local-visibility', true),
        localBackoffCapSeconds: positiveInt(values['local-backoff-cap']!, '--local-backoff-cap', true),
        providerOutageSeconds: positiveInt(values['provider-outage-seconds']!, '--provider-outage-seconds', true),
      },
      callCounters: target.kind === 'local' ? localCallCounters(target) : undefined,
      args: process.argv.slice(2),
      // Live progress only on a terminal; in CI logs, a line per phase.
      log: (line) =>
        tty && line.startsWith('  sent') ? process.stdout.write(`\r${line}   `) : console.log(tty ? `\n${line}` : line),
    });
    console.log(terminalSummary(results));
    const files = writeReports(results, path.resolve(values['report-dir']!));
    console.log(
      `\nReports: ${path.relative(process.cwd(), files.html)} and ${path.relative(process.cwd(), files.json)}`,
    );
    return results.passed ? 0 : 1;
  } finally {
    target.close();
  }
}

/** `--verify-only`: drain, then check the invariants, with the intent ledgers where given; the exit code. */
async function verifyOnly(target: Target, drainTimeoutMs: number, ledgerFiles: string[] | undefined): Promise<number> {
  try {
    const intents = ledgerFiles !== undefined && ledgerFiles.length > 0 ? readLedgers(ledgerFiles) : undefined;
    const { verification, drained, waitedMs, intentsChecked } = await verifyStack(target, {
      drainTimeoutMs,
      intents,
    });
    const c = verification.counts;
    console.log(
      intentsChecked
        ? `Intents: ${intents!.length} ledger lines from ${ledgerFiles!.length} file(s), ${c.intents} accepted keys: one ${verification.entityNounSingular} each, none for a refused key`
        : `Intents: NOT CHECKED. Without the generators' ledgers (--intents FILE..., written where INTENT_LEDGER points) the headline check, one ${verification.entityNounSingular} per accepted key and none for a refused one, was not run; only the effects of the ${verification.entityNoun} that exist were.`,
    );
    console.log(
      `Verified ${c.entities} ${verification.entityNoun} (${verification.effectsChecked}), ${c.providerKeys} provider keys; drained: ${drained ? 'yes' : 'NO'}`,
    );
    for (const v of verification.violations.slice(0, 50)) console.log(`  - [${v.invariant}] ${v.detail}`);
    const verdict = verdictOf(verification.violations.length, { drained, waitedMs });
    console.log(
      verdict.kind === 'pass'
        ? `PASS: 0 violations${intentsChecked ? '' : ' (intents not checked)'}`
        : verdictLine(verdict),
    );
    return verification.violations.length === 0 && drained ? 0 : 1;
  } finally {
    target.close();
  }
}

/** On a deployed stack: refuses, before a request is sent, a load its account and stage cannot carry. */
async function refuseLoadBeyondCapacity(target: Target, profile: Profile): Promise<void> {
  const problems = capacityProblems(await readCapacity(target.apiUrl, target.region), {
    rate: profile.rate,
    connections: profile.connections,
  });
  if (problems.length > 0) {
    target.close();
    throw new UsageError(
      `${target.name} cannot carry this load; nothing was sent:\n${problems.map((p) => `  - ${p}`).join('\n')}\n(--ignore-capacity sends anyway)`,
    );
  }
}

function positiveInt(value: string, flag: string, allowZero = false): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1))
    throw new UsageError(`${flag} must be a whole number${allowZero ? '' : ' above 0'}, got "${value}"`);
  return n;
}

function parseMix(value: string): Mix {
  const mix = { ...DEFAULT_MIX };
  for (const part of value.split(',')) {
    const [key, raw] = part.split('=');
    if (!(key in mix) || !Number.isFinite(Number(raw)) || Number(raw) < 0)
      throw new UsageError(`Bad --mix entry "${part}"`);
    mix[key as keyof Mix] = Number(raw);
  }
  if (mix.new <= 0) throw new UsageError('--mix needs new > 0');
  return mix;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(
      isUsageError(error)
        ? `${error.message}\n\n${USAGE}`
        : (accessDeniedLine(error, 'loadtest') ??
            `loadtest: ${error instanceof Error ? error.message : String(error)}`),
    );
    process.exit(exitStatusOf(error));
  },
);
