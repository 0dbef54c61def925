import * as fs from 'node:fs';
import { BENCH_PROFILES, type BenchProfile } from './profiles';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { proofDomainOf } from '../domain-parts';
import { loadDomain } from '../load-domain';
import { takeToolingFlag, toolingFlagHelp } from '../cli/tooling-flag';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';
import type { ProofDomain } from '../proof-kit/domain';
import { UNIT_PRICES } from '../proof-kit/prices';
import { benchDynamoDbClient } from './client';
import { PROVIDER_WORDS, type BatchComparison } from './batch-comparison';
import { benchFailures, closingLines, type ClosingFigures, type DesignKind } from './figures';
import { measureAll } from './measure';
import { acquireRuntime, type BenchRuntime } from './runtime';
import { createPrivateTables, stackTables } from './tables';

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
 * Built from what every example gives the tools (packages/tools/src/domain.ts, loaded by its entry point): its proof domain (the plan the
 * pipeline sends, its entities' ids and events, the table they live in) and its consumer specs. The
 * domain writes nothing for the bench. The figures name the domain's entities by its proof domain's
 * nouns; the profiles' settings keep the shop's words (`pipelineOrders`: entities).
 */
// The SDK's Node-version notice is noise between the figures (the runtime hides it the same way).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export { BENCH_PROFILES, type BenchProfile };

export const USAGE = `Usage: npm run bench -- [--profile quick|full] [--hot-sku] [--use-running] [--synth] [--results-dir DIR]
  --profile quick   a few minutes; full (default) under 15 minutes
  --hot-sku         also run the pipeline with every entity on the fewest resources the plan allows (the
                    shop: 1-3 SKUs): rate, effect lag, tries per message
  --use-running     measure the runtime \`npm start\` runs (.local/outputs.json) instead of starting one
  --synth           synthesize even when cdk.out exists
  --results-dir DIR where the results go (default bench-results)
  ${toolingFlagHelp(18)}
  -h, --help        this text
Exit codes: 0 done, 1 something failed, 2 usage error.`;

/** The benchmark, as `npm run bench` runs it (cli.ts): the exit status. */
export async function runBench(argv: string[]): Promise<number> {
  const { toolingModule, args } = takeToolingFlag(argv);
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
  // The domain, once, from the entry point: the runtime's local provider, the target and the plan all take it.
  const tooling = loadDomain(PROJECT_DIR, { toolingModule });
  if (tooling.proof === undefined) {
    console.error(
      "bench: the example's tooling module gives no proof domain (`proof`, packages/tools/src/proof-kit/domain.ts): the bench has no plan to send",
    );
    return 2;
  }
  const domain = proofDomainOf(tooling);
  const runtime = await acquireRuntime({
    domain: tooling,
    useRunning: values['use-running']!,
    synth: values.synth!,
    log: print,
  });
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
  faults: { sides: Record<DesignKind, { double: number; missing: number }> };
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
    faults: results.faults.sides,
    pipelines: [
      { name: 'pipeline', ...results.pipeline },
      ...(results.hotSku === undefined ? [] : [{ name: 'hot-resource pipeline', ...results.hotSku }]),
    ],
    batches: results.batches.settings.map((b) => ({
      provider: PROVIDER_WORDS[b.provider],
      ours: b.sides.ours,
      sequenced: b.sides.sequenced,
    })),
  });
  for (const failure of failures) console.error(failure);
  return failures.length === 0 ? 0 : 1;
}

async function benchRun(
  runtime: BenchRuntime,
  domain: ProofDomain,
  profile: BenchProfile,
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
