import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { exampleDomain } from '../support/example-domain';
import { unusedConsumerName } from '../support/consumer-names';
import { exampleName } from '../support/example-reach';
import { copyOfRepository, runInCopy } from '../support/repo-copy';

/**
 * `npm run new:consumer` in a copy of the repository (the files git tracks or
 * would track, so a consumer already generated here comes along, with this
 * checkout's node_modules linked in): what it generates must
 * typecheck with the rest, pass lint, and its generated unit test must pass
 * there; a name it refuses must leave the copy as it was.
 *
 * One standard and one FIFO consumer (the FIFO one with `--provider`) are generated into the same
 * copy, so one typecheck and one jest run cover both templates; then the tests that read the
 * consumer list (logical ids, providers, README counts, the report, the timeouts simulation) run
 * there unedited and pass. A few minutes, most of it the typecheck and the synths. Their names are
 * ones no consumer on the list has ('audit' unless `npm run new:consumer -- audit` was run here,
 * then 'audit-2', ...).
 */

const REPO = resolve(__dirname, '../..');
/** The example's folder, as package.json names it: where the scaffolder writes. */
const EXAMPLE = exampleName(REPO);
const STANDARD = unusedConsumerName('audit');
const FIFO = unusedConsumerName('stock-audit');
/** The FIFO one's provider: named unlike any consumer, so a provider named after its consumer cannot pass for it. */
const PROVIDER = 'ledger-service';
/** A FIFO consumer whose effect is its own state alone (a ledger per account): no provider. */
const NO_PROVIDER = unusedConsumerName('account-ledger');
/** A consumer on the inbox ledger, as an effect summing over many entities' events takes it. */
const INBOX = unusedConsumerName('totals');
const GENERATED = [
  { name: STANDARD, args: [STANDARD] },
  { name: FIFO, args: [FIFO, '--fifo', '--provider', PROVIDER] },
  { name: NO_PROVIDER, args: [NO_PROVIDER, '--fifo', '--no-provider'] },
  { name: INBOX, args: [INBOX, '--ledger', 'inbox'] },
];
/** The event types the scaffolder gives a consumer: the first to a standard one, all to a FIFO one. */
const EVENT_TYPES =
  exampleDomain().scaffold?.eventTypes ??
  ((): never => {
    throw new Error("The example's tooling gives no `scaffold`: npm run new:consumer has nowhere to write.");
  })();
const quoted = (types: readonly string[]) => types.map((type) => `'${type}'`).join(', ');
/**
 * Tests that read the example's consumer list or its entry modules: they must pass with the generated
 * ones there. The first three are the shop's (a fork whose example has no such test runs the rest); the
 * proof kit's consumer discovery and the check that every entry module is a factory reading no
 * environment as it loads, with its one-line binding, always run.
 */
const LIST_READERS = [
  'test/infra/logical-ids.test.ts',
  'test/infra/providers.test.ts',
  'test/infra/readme-counts.test.ts',
  'test/unit/proof-kit-consumers.test.ts',
  'test/unit/entry-modules.test.ts',
].filter((file) => existsSync(join(REPO, file)));
const filesOf = (name: string) => [
  `lambdas/${EXAMPLE}/entry-points/${name}-consumer.ts`,
  `lambdas/${EXAMPLE}/handlers/${name}-consumer.ts`,
  `lambdas/${EXAMPLE}/use-cases/${name}-effect.ts`,
  `lambdas/${EXAMPLE}/aws/${name}-ledger.ts`,
  `test/unit/${name}-consumer.test.ts`,
];
const CHANGED = [`lambdas/${EXAMPLE}/consumers.ts`];
/** The copy's typecheck alone takes 30-90 s on a busy machine. */
const SLOW = 240_000;

let copy: string;

const run = (tool: string, args: string[]) => runInCopy(copy, tool, args);

const newConsumer = (...args: string[]) => run('tsx', ['packages/tools/src/scaffolder/new-consumer.ts', ...args]);

/** Every file under lambdas/ and test/unit/ with its content: what a refusal must leave untouched. */
function snapshot(): Map<string, string> {
  const files = new Map<string, string>();
  for (const dir of ['lambdas', 'test/unit'])
    for (const entry of readdirSync(join(copy, dir), { recursive: true, withFileTypes: true }))
      if (entry.isFile()) {
        const path = join(entry.parentPath, entry.name);
        files.set(path, readFileSync(path, 'utf8'));
      }
  return files;
}

beforeAll(() => {
  copy = copyOfRepository(REPO, 'new-consumer-');
}, SLOW);

afterAll(() => {
  if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
});

describe('refused names write nothing', () => {
  test.each([
    ['an upper-case name', ['Audit'], 1, /lower-case letters, digits and hyphens/],
    ['the name of a consumer on the list', ['loyalty'], 1, /a consumer named "loyalty" exists/],
    ['no name', [], 2, /give one consumer name \(usage: npm run new:consumer/],
    ['an unknown option', [STANDARD, '--fifoo'], 2, /Unknown option '--fifoo' \(usage: npm run new:consumer/],
    [
      'an upper-case provider name',
      [STANDARD, '--provider', 'Billing'],
      1,
      /provider "Billing": a name is 2-32 lower-case letters, digits and hyphens/,
    ],
    ['a provider name with a space', [STANDARD, '--provider', 'the bank'], 1, /provider "the bank": a name is/],
    ['--provider without a name', [STANDARD, '--provider'], 2, /Option '--provider <value>' argument missing/],
    [
      '--provider with --no-provider',
      [STANDARD, '--provider', 'mail', '--no-provider'],
      2,
      /--provider and --no-provider contradict each other/,
    ],
    [
      'the generic effect on a FIFO ordered by ordering key',
      [STANDARD, '--fifo', '--ordering-key'],
      1,
      /the sequenced ledger's sequence condition .* ordered by the envelope's orderingKey .* its versions are not per ordering key/,
    ],
    [
      'the generic effect on the inbox ledger, on a FIFO ordered by ordering key',
      [STANDARD, '--fifo', '--ordering-key', '--ledger', 'inbox'],
      1,
      /the generic effect's version guard .* ordered by the envelope's orderingKey .* its versions are not per ordering key/,
    ],
    [
      'a ledger the mechanism has not',
      [STANDARD, '--ledger', 'outbox'],
      2,
      /--ledger is sequenced or inbox, not "outbox"/,
    ],
  ])('%s: exit %d (1 refused, 2 usage), one line on stderr, no file changed', (_what, args, exit, reason) => {
    const before = snapshot();

    const { status, output } = newConsumer(...args);

    expect(status).toBe(exit);
    expect(output.trim()).toMatch(reason);
    expect(output.trim().split('\n')).toHaveLength(1);
    expect(snapshot()).toEqual(before);
  });

  test('a name whose files exist, though it is not on the list: exit 1, no file changed', () => {
    const before = snapshot();
    const existing = join(copy, 'test/unit/orphan-consumer.test.ts');
    cpSync(join(copy, 'test/unit/consumers.test.ts'), existing);

    const { status, output } = newConsumer('orphan');

    rmSync(existing);
    expect(status).toBe(1);
    expect(output.trim()).toBe(
      'new:consumer: test/unit/orphan-consumer.test.ts exists; remove it or choose another name',
    );
    expect(snapshot()).toEqual(before);
  });
});

describe('a standard, a FIFO and a provider-less FIFO consumer, generated', () => {
  beforeAll(() => {
    for (const { args } of GENERATED) {
      const { status, output } = newConsumer(...args);
      if (status !== 0) throw new Error(`new:consumer ${args.join(' ')} failed:\n${output}`);
    }
  }, SLOW);

  test('writes the entry point, its deployed binding, the effect, the ledger and the test, and adds the spec to the consumer list', () => {
    const consumers = readFileSync(join(copy, `lambdas/${EXAMPLE}/consumers.ts`), 'utf8');

    for (const { name } of GENERATED) {
      for (const path of filesOf(name)) expect(existsSync(join(copy, path))).toBe(true);
    }
    // Above the marker, so the next one goes after them.
    expect(consumers.indexOf(`name: '${FIFO}'`)).toBeGreaterThan(consumers.indexOf(`name: '${STANDARD}'`));
    expect(consumers.indexOf('// new:consumer inserts above this line')).toBeGreaterThan(
      consumers.indexOf(`name: '${FIFO}'`),
    );
    // Names are lower-case letters, digits and hyphens: nothing in them a pattern would read as special.
    expect(consumers).toMatch(
      new RegExp(
        `name: '${STANDARD}',\\s+fifo: false,\\s+eventTypes: \\[${quoted(EVENT_TYPES.slice(0, 1))}\\],\\s+entry: 'lambdas/${EXAMPLE}/handlers/${STANDARD}-consumer.ts',\\s+batchSize: 10,\\s+batchingWindowSeconds: 1,\\s+maxConcurrency: 10,`,
      ),
    );
    expect(consumers).toMatch(
      new RegExp(
        `name: '${FIFO}',\\s+fifo: true,\\s+eventTypes: \\[${quoted(EVENT_TYPES)}\\],\\s+entry: 'lambdas/${EXAMPLE}/handlers/${FIFO}-consumer.ts',\\s+batchSize: 10,\\s+batchingWindowSeconds: 0,`,
      ),
    );
  });

  test('the provider is the consumer name by default, or the one --provider names, in the spec and in the handler', () => {
    const consumers = readFileSync(join(copy, `lambdas/${EXAMPLE}/consumers.ts`), 'utf8');
    const handlerOf = (name: string) =>
      readFileSync(join(copy, `lambdas/${EXAMPLE}/entry-points/${name}-consumer.ts`), 'utf8');

    expect(consumers).toMatch(new RegExp(`name: '${STANDARD}',[^}]*providers: \\['${STANDARD}'\\]`));
    expect(consumers).toMatch(new RegExp(`name: '${FIFO}',[^}]*providers: \\['${PROVIDER}'\\]`));
    expect(handlerOf(STANDARD)).toContain(`wiring.provider('${STANDARD}')`);
    expect(handlerOf(FIFO)).toContain(`wiring.provider('${PROVIDER}')`);
  });

  test('the sequenced ledger by default, the inbox ledger with --ledger inbox: in the spec and in the ledger it extends', () => {
    const consumers = readFileSync(join(copy, `lambdas/${EXAMPLE}/consumers.ts`), 'utf8');
    const specOf = (name: string) => {
      const from = consumers.slice(consumers.indexOf(`name: '${name}'`));
      return from.slice(0, from.indexOf('}'));
    };
    const ledgerOf = (name: string) => readFileSync(join(copy, `lambdas/${EXAMPLE}/aws/${name}-ledger.ts`), 'utf8');

    for (const name of [STANDARD, FIFO, NO_PROVIDER]) {
      expect(specOf(name)).toContain("ledger: 'sequenced'");
      expect(ledgerOf(name)).toContain('extends DynamoDbSequencedEntityEffectLedger');
    }
    expect(specOf(INBOX)).toContain("ledger: 'inbox'");
    expect(ledgerOf(INBOX)).toContain('extends DynamoDbEntityEffectLedger');
  });

  test('--no-provider: the spec names no provider and the handler wires none', () => {
    const consumers = readFileSync(join(copy, `lambdas/${EXAMPLE}/consumers.ts`), 'utf8');
    const spec = consumers.slice(consumers.indexOf(`name: '${NO_PROVIDER}'`));
    const handler = readFileSync(join(copy, `lambdas/${EXAMPLE}/entry-points/${NO_PROVIDER}-consumer.ts`), 'utf8');

    expect(spec.slice(0, spec.indexOf('}'))).not.toContain('providers');
    expect(handler).not.toContain('wiring.provider(');
  });

  test(
    'the repository with them typechecks',
    () => {
      const { status, output } = run('tsc', ['--noEmit', '-p', '.']);

      expect(output).toBe('');
      expect(status).toBe(0);
    },
    SLOW,
  );

  test('what it wrote passes lint and prettier', () => {
    const written = [...GENERATED.flatMap(({ name }) => filesOf(name)), ...CHANGED];

    expect(run('eslint', written)).toEqual({ status: 0, output: '' });
    expect(run('prettier', ['--check', ...written])).toMatchObject({ status: 0 });
  });

  test('the generated unit tests pass: exactly once, and the DLQ for what the consumer does not take', () => {
    const tests = GENERATED.map(({ name }) => `test/unit/${name}-consumer.test.ts`);

    const { status, output } = run('jest', ['--selectProjects', 'unit', '--ci', ...tests]);

    expect(output).toMatch(/Tests:\s+16 passed, 16 total/);
    expect(status).toBe(0);
  });

  test(
    'the tests that read the consumer list pass with them on it, unedited',
    () => {
      const { status, output } = run('jest', ['--selectProjects', 'unit', 'infra', '--ci', ...LIST_READERS]);

      expect(output).toMatch(new RegExp(`Test Suites:\\s+${LIST_READERS.length} passed, ${LIST_READERS.length} total`));
      expect(output).toMatch(/Tests:\s+(\d+) passed, \1 total/);
      expect(status).toBe(0);
    },
    SLOW,
  );
});
