import '../cli/require-node'; // first: an unsupported Node stops here, before anything loads
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { EXIT, UsageError } from '../cli/exit';
import * as prettier from 'prettier';
import type { ExampleTooling } from '../domain';
import { loadDomain } from '../load-domain';
import { takeToolingFlag, toolingFlagHelp } from '../cli/tooling-flag';
import { consumerId, validateConsumerSpecs, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';
import {
  bindingSource,
  effectSource,
  entryPointSource,
  ledgerSource,
  providerOf,
  specSource,
  testSource,
} from './consumer-templates';

/**
 * `npm run new:consumer -- <name> [--fifo] [--provider <provider> | --no-provider] [--ledger sequenced|inbox]`: scaffolds a queue
 * consumer whose effect calls one external provider, named `<provider>` (default: the consumer's name),
 * or, with `--no-provider`, none: its effect is its own state alone (a ledger per account, a projection),
 * its spec names no provider, and the proof kit owes no call from it (it still checks every claim).
 * Its ledger is the sequenced one (the claim on the event's entity item, one conditional update, a claim
 * that never expires) unless `--ledger inbox` asks for an inbox claim per event, the ledger for an effect
 * that sums over many entities' events (docs/architecture.md, "Two ledgers").
 * `--ordering-key` (FIFO grouped by the envelope's `orderingKey`) is refused: the generated effect's
 * version guard compares versions per entity, which holds only when each entity's events arrive in
 * order; a consumer ordered by ordering key needs an effect of its own (docs/adapting.md).
 *
 * Writes its entry point (the handler factory `makeHandler(wiring)`, packages/runtime/src/consumer/queue-consumer.ts
 * on its spec), its deployed binding (`handlers/<name>-consumer.ts`, the spec's entry), its effect module (the generic effect, to be replaced by the user's
 * own), its ledger (an InboxLedger, where its own state goes) and its unit test, then adds its spec to
 * the example's consumer list (`<folder>/consumers.ts`, the folder named by the example's tooling; above the
 * marker line). The consumer list drives
 * the rest: queues, routing, grants, alarms, outputs, the proof kit.
 *
 * Everything is checked before anything is written: a bad consumer or provider name (the rules of
 * validateConsumerSpecs, which this runs on the list with the new spec), a name
 * or a file that exists, a list without its marker. Then it exits 1 with one
 * line on stderr, and the repository is unchanged.
 */

const MARKER = '// new:consumer inserts above this line';
/**
 * Where the example keeps its consumers (its `consumers.ts` with the marker line and `consumerSpec`,
 * and `entry-points/`, `handlers/`, `use-cases/`, `aws/`) and the event types a new consumer may take: the
 * example's, from its tooling module (the domain the entry point loads). A tooling module without them (the neutral
 * fixture's has no consumer folder) is refused before anything is read or written.
 */
function scaffold(domain: ExampleTooling): NonNullable<ExampleTooling['scaffold']> {
  const given = domain.scaffold;
  if (given === undefined)
    throw new Refused(
      "the example's tooling module gives no `scaffold` (packages/tools/src/domain.ts): there is no consumer folder to write into",
    );
  return given;
}
/** Standard queue: parallel, for effects that do not care about order. */
const STANDARD = { batchSize: 10, batchingWindowSeconds: 1, maxConcurrency: 10 };
/** FIFO: one entity's events in order; FIFO event sources take no batching window. */
const FIFO = { batchSize: 10, batchingWindowSeconds: 0, maxConcurrency: 10 };

class Refused extends Error {}

interface Plan {
  writes: { path: string; text: string; what: string }[];
  spec: ConsumerSpec;
}

export async function main(argv: string[], root = PROJECT_DIR): Promise<number> {
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      console.log(HELP);
      return EXIT.ok;
    }
    const { toolingModule, args } = takeToolingFlag(argv);
    const domain = loadDomain(root, { toolingModule });
    const plan = await planConsumer(args, root, domain);
    for (const { path, text } of plan.writes) {
      // A fork may have no handlers/ folder yet.
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    report(plan, scaffold(domain));
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`new:consumer: ${error.message} (${USAGE})`);
      return EXIT.usage;
    }
    if (!(error instanceof Refused)) throw error;
    console.error(`new:consumer: ${error.message}`);
    return EXIT.failed;
  }
}

async function planConsumer(argv: string[], root: string, domain: ExampleTooling): Promise<Plan> {
  const { name, fifo, provider, orderingKey, ledger } = parseCommandLine(argv);
  // null: --no-provider.
  const { folder, eventTypes } = scaffold(domain);
  const entryPoint = `${name}-consumer`;
  const spec: ConsumerSpec = {
    name,
    fifo,
    // FIFO: everything the producer writes, in order per entity; standard: its first type.
    eventTypes: fifo ? [...eventTypes] : [eventTypes[0]],
    // The deployed binding; its factory is entry-points/ (docs/architecture.md, "Entry modules").
    entry: `${folder}/handlers/${entryPoint}.ts`,
    // Its effect calls one provider (wiring.provider(<provider>)); several consumers may share one.
    ...(provider === null ? {} : { providers: [provider] }),
    ...(fifo ? FIFO : STANDARD),
    ...(orderingKey ? { orderBy: 'ordering-key' as const } : {}),
    // The generated effect (applyEntityEffect) drops an event older than its entity's last: the spec
    // says so, and validateConsumerSpecs refuses an ordering under which that would lose events.
    staleGuard: 'entity-version',
    // Where its claims live: on the entity's own item (no inbox item, no transaction, no horizon) unless
    // --ledger inbox; the spec tells the stack, the proof kit and the DLQ tool where to look.
    ledger,
  };
  if (domain.consumers.some((c) => c.name === name))
    throw new Refused(`a consumer named "${name}" exists (${folder}/consumers.ts)`);
  try {
    validateConsumerSpecs([...domain.consumers, spec], eventTypes);
  } catch (error) {
    throw new Refused((error as Error).message);
  }

  const id = consumerId(name);
  const files = {
    entryPoint: `${folder}/entry-points/${entryPoint}.ts`,
    binding: spec.entry,
    effect: `${folder}/use-cases/${name}-effect.ts`,
    ledger: `${folder}/aws/${name}-ledger.ts`,
    test: `test/unit/${entryPoint}.test.ts`,
  };
  for (const path of Object.values(files))
    if (existsSync(join(root, path))) throw new Refused(`${path} exists; remove it or choose another name`);

  const consumersPath = `${folder}/consumers.ts`;
  const consumers = insertBefore(read(root, consumersPath), consumersPath, MARKER, specSource(spec));

  const sources = [
    { path: files.entryPoint, text: entryPointSource(spec, id), what: 'the handler factory' },
    { path: files.binding, text: bindingSource(spec), what: 'its deployed binding' },
    { path: files.effect, text: effectSource(spec, id), what: 'the effect: replace it with yours' },
    { path: files.ledger, text: ledgerSource(spec, id), what: 'its ledger: its own state goes here' },
    { path: files.test, text: testSource(spec, id, folder), what: 'its unit test' },
    { path: consumersPath, text: consumers, what: `its spec (${describe(spec)})` },
  ];
  const writes = [];
  for (const source of sources) writes.push({ ...source, text: await format(root, source.path, source.text) });
  return { writes, spec };
}

const USAGE =
  'usage: npm run new:consumer -- <name> [--fifo] [--provider <provider> | --no-provider] [--ledger sequenced|inbox]';
const HELP = `Usage: npm run new:consumer -- <name> [--fifo] [--provider <provider> | --no-provider] [--ledger sequenced|inbox]
  Scaffolds a consumer on the example's list: its handler, its effect (replace it with yours), its ledger,
  its unit test, and its entry in the consumer list, which gives it a queue, a DLQ, grants, alarms and outputs.
  <name>                 2-32 lower-case letters, digits and hyphens, not on the list yet
  --fifo                 a FIFO consumer: every event type, in order per entity (default: standard, the first type)
  --provider <provider>  the provider its effect calls (default: one named after the consumer)
  --no-provider          its effect is its own state alone: no provider, no call owed
  --ledger sequenced     (default) its claim on the event's entity item, in one conditional update with the
                         effect; the claim never expires, so the consumer has no dedupe horizon
  --ledger inbox         an inbox claim per event, in one transaction with the effect: for an effect that
                         sums over many entities' events (a total per customer)
  ${toolingFlagHelp(23)}
  -h, --help             this text
Exit codes: 0 written, 1 refused (nothing written; the line says why), 2 usage error.`;

function parseCommandLine(argv: string[]): {
  name: string;
  fifo: boolean;
  provider: string | null;
  orderingKey: boolean;
  ledger: 'inbox' | 'sequenced';
} {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        fifo: { type: 'boolean', default: false },
        provider: { type: 'string' },
        'no-provider': { type: 'boolean', default: false },
        'ordering-key': { type: 'boolean', default: false },
        ledger: { type: 'string', default: 'sequenced' },
      },
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message.split('. To specify a positional')[0]);
  }
  if (parsed.positionals.length !== 1) throw new UsageError('give one consumer name');
  const name = parsed.positionals[0];
  const noProvider = parsed.values['no-provider'] === true;
  if (noProvider && parsed.values.provider !== undefined)
    throw new UsageError('--provider and --no-provider contradict each other: give one');
  const ledger = parsed.values.ledger;
  if (ledger !== 'sequenced' && ledger !== 'inbox')
    throw new UsageError(`--ledger is sequenced or inbox, not ${JSON.stringify(ledger)}`);
  // Its name is checked with the spec (validateConsumerSpecs), as the consumer's is.
  return {
    ledger,
    name,
    fifo: parsed.values.fifo === true,
    provider: noProvider ? null : (parsed.values.provider ?? name),
    orderingKey: parsed.values['ordering-key'] === true,
  };
}

function read(root: string, path: string): string {
  return readFileSync(join(root, path), 'utf8');
}

/** `text` with `insertion` on its own lines just above the line holding `marker` (the marker found exactly once). */
function insertBefore(text: string, path: string, marker: string, insertion: string): string {
  const at = text.indexOf(marker);
  if (at < 0 || text.indexOf(marker, at + 1) >= 0)
    throw new Refused(`${path} must hold the line "${marker}" exactly once`);
  const lineStart = text.lastIndexOf('\n', at) + 1;
  return text.slice(0, lineStart) + insertion + text.slice(lineStart);
}

async function format(root: string, path: string, text: string): Promise<string> {
  const filepath = join(root, path);
  const options = (await prettier.resolveConfig(filepath)) ?? {};
  return prettier.format(text, { ...options, filepath });
}

const describe = (spec: ConsumerSpec) =>
  `${spec.fifo ? 'FIFO' : 'standard'} queue, ${spec.eventTypes.join(' and ')}, batch ${spec.batchSize}, ` +
  `window ${spec.batchingWindowSeconds} s, concurrency ${spec.maxConcurrency}, ` +
  (providerOf(spec) === undefined ? 'no provider' : `provider ${providerOf(spec)}`) +
  `, ${spec.ledger ?? 'inbox'} ledger`;

function report(plan: Plan, { folder }: NonNullable<ExampleTooling['scaffold']>): void {
  const { name } = plan.spec;
  const width = Math.max(...plan.writes.map((w) => w.path.length));
  console.log(`new:consumer: ${name} (${describe(plan.spec)})`);
  for (const { path, what } of plan.writes) console.log(`  ${path.padEnd(width)}  ${what}`);
  console.log(
    [
      'Next:',
      `  npx jest test/unit/${name}-consumer.test.ts`,
      '  npm run typecheck && npm run lint',
      '  npx cdk synth -c stage=dev      (its queue, DLQ, mapping, grants, alarms and outputs come from the spec)',
      '  npm start, then npm run loadtest -- --profile smoke --faults all',
      `  then write its state in ${folder}/aws/${name}-ledger.ts and its effect in ${folder}/use-cases/${name}-effect.ts (docs/adapting.md, "Add a consumer")`,
    ].join('\n'),
  );
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
