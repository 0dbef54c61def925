import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { exampleName } from '../support/example-reach';

/**
 * The folder boundaries the lint config holds: the mechanism (lambdas/exactly-once, lib/exactly-once)
 * imports nothing of the example or the tools, the example imports the mechanism through its index
 * only, only the aws/ folders import the AWS SDK, and the tools already cut loose read the example's
 * domain through tools/example.ts. Each case lints one import line as if it were
 * written in the named file (the file need not exist), all in one ESLint process (jest cannot load
 * the ESM config itself).
 */
const ROOT = path.join(__dirname, '..', '..');
// The rules are keyed on the example's folder as package.json names it, so the cases are too: they hold
// for a fork that renames its example.
const EXAMPLE = exampleName(ROOT);

const LINT_CASES = `
import { ESLint } from 'eslint';
const cases = JSON.parse(process.argv[1]);
const eslint = new ESLint({ cwd: process.cwd() });
const out = [];
for (const [filePath, code] of cases) {
  const [result] = await eslint.lintText(code, { filePath });
  out.push(result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message));
}
console.log(JSON.stringify(out));
`;

type Case = [file: string, importLine: string];
const linted = new Map<string, string[]>();

/** Lints every case of this file at once, before the tests read their results. */
function lintAll(cases: Case[]): void {
  const input = cases.map(([file, line]) => [path.join(ROOT, file), `${line}\nexport const used = value;\n`]);
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', LINT_CASES, JSON.stringify(input)], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  (JSON.parse(output) as string[][]).forEach((errors, i) => linted.set(cases[i].join(' '), errors));
}

function restrictedImportErrors(file: string, importLine: string): string[] {
  const errors = linted.get(`${file} ${importLine}`);
  if (errors === undefined) throw new Error(`not linted: ${file} ${importLine}`);
  return errors;
}

// The import lines are text the example-reach scan reads as imports of this file: a test-support file
// that reaches no example (cdk-app, not the shop's synth) keeps this file runnable without the example.
const EXAMPLE_FROM_MECHANISM: Case[] = [
  ['lambdas/exactly-once/consumer/probe.ts', `import { value } from '../../${EXAMPLE}/consumers';`],
  ['lambdas/exactly-once/aws/probe.ts', `import { value } from '../../${EXAMPLE}/aws/ledgers';`],
  ['lambdas/exactly-once/probe.ts', "import { value } from '../../tools/proof-kit/verify';"],
  ['lib/exactly-once/probe.ts', `import { value } from '../${EXAMPLE}/storage';`],
  ['lib/exactly-once/probe.ts', "import { value } from '../../test/support/cdk-app';"],
];
const MECHANISM_PAST_ITS_INDEX: Case[] = [
  [`lambdas/${EXAMPLE}/aws/probe.ts`, "import { value } from '../../exactly-once/aws/inbox-ledger';"],
  [`lambdas/${EXAMPLE}/api/probe.ts`, "import { value } from '../../exactly-once/api/http';"],
  [`lambdas/${EXAMPLE}/entry-points/probe.ts`, "import { value } from '../../exactly-once/testing/other';"],
  [`lambdas/${EXAMPLE}/use-cases/probe.ts`, "import { value } from '../../exactly-once/aws/inbox-ledger';"],
  [`lambdas/${EXAMPLE}/aws/probe.ts`, "import { value } from '../../exactly-once/wiring/consumer-wiring';"],
  [`lib/${EXAMPLE}/probe.ts`, "import { value } from '../exactly-once/outbox-relay';"],
  [`lib/${EXAMPLE}/probe.ts`, "import { value } from '../../lambdas/exactly-once/env-names';"],
];
const ALLOWED: Case[] = [
  [`lambdas/${EXAMPLE}/aws/probe.ts`, "import { value } from '../../exactly-once/aws';"],
  [`lambdas/${EXAMPLE}/api/probe.ts`, "import { value } from '../../exactly-once/api';"],
  [`lambdas/${EXAMPLE}/entry-points/probe.ts`, "import { value } from '../../exactly-once/runtime';"],
  [`lambdas/${EXAMPLE}/entry-points/probe.ts`, "import { value } from '../../exactly-once/testing';"],
  [`lambdas/${EXAMPLE}/use-cases/probe.ts`, "import { value } from '../../exactly-once';"],
  [`lambdas/${EXAMPLE}/aws/probe.ts`, "import { value } from '@aws-sdk/lib-dynamodb';"],
  ['lambdas/exactly-once/aws/probe.ts', "import { value } from '@aws-sdk/client-sqs';"],
  [`lib/${EXAMPLE}/probe.ts`, "import { value } from '../exactly-once';"],
  [`lib/${EXAMPLE}/probe.ts`, `import { value } from '../../lambdas/${EXAMPLE}/consumers';`],
  ['tools/dlq/probe.ts', "import { value } from '../example';"],
];
const SDK_OUTSIDE_AWS: Case[] = [
  [`lambdas/${EXAMPLE}/domain/probe.ts`, "import { value } from '@aws-sdk/client-dynamodb';"],
  ['lambdas/exactly-once/consumer/probe.ts', "import { value } from '@aws-sdk/client-sqs';"],
  ['lambdas/exactly-once/probe.ts', "import { value } from '@aws-lambda-powertools/parameters/ssm';"],
];
const DOMAIN_PAST_THE_EXAMPLE_MODULE: Case[] = [
  ['tools/dlq/probe.ts', `import { value } from '../../lambdas/${EXAMPLE}/consumers';`],
  ['tools/stack.ts', `import { value } from '../lambdas/${EXAMPLE}/domain/events';`],
  ['tools/proof-kit/faults.ts', `import { value } from '../../lambdas/${EXAMPLE}/consumers';`],
  ['tools/scaffolder/new-consumer.ts', `import { value } from '../../lambdas/${EXAMPLE}/domain/events';`],
  ['tools/local-runtime/provider/server.ts', `import { value } from '../../../lambdas/${EXAMPLE}/domain/order';`],
  ['tools/simulation/campaign.ts', `import { value } from '../../tooling/${EXAMPLE}/simulation/world';`],
  ['tools/example.ts', `import { value } from '../tooling/${EXAMPLE}';`],
  ['tools/proof-kit/verify.ts', `import { value } from '../../tooling/${EXAMPLE}/proof';`],
  ['tools/bench/pipeline.ts', `import { value } from '../../lambdas/${EXAMPLE}/domain/order';`],
];
const AGAINST_THE_LAYERS: Case[] = [
  ['lambdas/exactly-once/consumer/probe.ts', "import { value } from '../aws/clients';"],
  ['lambdas/exactly-once/outbox/probe.ts', "import { value } from '../wiring/outbox-wiring';"],
  ['lambdas/exactly-once/inbox/probe.ts', "import { value } from '../api/http';"],
  ['lambdas/exactly-once/runtime/probe.ts', "import { value } from '../faults/plan';"],
  ['lambdas/exactly-once/probe.ts', "import { value } from './aws/inbox-ledger';"],
  ['lambdas/exactly-once/aws/probe.ts', "import { value } from '../wiring/consumer-wiring';"],
  ['lambdas/exactly-once/aws/probe.ts', "import { value } from '../faults/plan';"],
  ['lambdas/exactly-once/faults/probe.ts', "import { value } from '../wiring/outbox-wiring';"],
  ['lambdas/exactly-once/api/probe.ts', "import { value } from '../wiring/consumer-wiring';"],
];
const WITH_THE_LAYERS: Case[] = [
  ['lambdas/exactly-once/aws/probe.ts', "import { value } from '../consumer/ports';"],
  ['lambdas/exactly-once/faults/probe.ts', "import { value } from '../aws/ssm-json-parameter';"],
  ['lambdas/exactly-once/api/probe.ts', "import { value } from '../aws/transient-errors';"],
  ['lambdas/exactly-once/wiring/probe.ts', "import { value } from '../aws/clients';"],
  ['lambdas/exactly-once/wiring/probe.ts', "import { value } from '../faults/consumer-faults';"],
  ['lambdas/exactly-once/index.ts', "import { value } from './wiring/consumer-wiring';"],
];
const HANDLER_INTO_APP: Case = [
  `lib/${EXAMPLE}/probe.ts`,
  `import { value } from '../../lambdas/${EXAMPLE}/entry-points/create-order';`,
];

beforeAll(() =>
  lintAll([
    ...EXAMPLE_FROM_MECHANISM,
    ...MECHANISM_PAST_ITS_INDEX,
    ...ALLOWED,
    ...SDK_OUTSIDE_AWS,
    ...DOMAIN_PAST_THE_EXAMPLE_MODULE,
    ...AGAINST_THE_LAYERS,
    ...WITH_THE_LAYERS,
    HANDLER_INTO_APP,
  ]),
);

test.each(EXAMPLE_FROM_MECHANISM)('%s may not import the example, the tools or the tests: %s', (file, importLine) => {
  const errors = restrictedImportErrors(file, importLine);

  expect(errors).toEqual([expect.stringContaining('import nothing of the example')]);
});

test.each(MECHANISM_PAST_ITS_INDEX)('%s imports the mechanism through its index only: %s', (file, importLine) => {
  const errors = restrictedImportErrors(file, importLine);

  expect(errors).toEqual([expect.stringContaining('from its index')]);
});

test.each(ALLOWED)('%s may write %s', (file, importLine) => {
  expect(restrictedImportErrors(file, importLine)).toEqual([]);
});

test.each(SDK_OUTSIDE_AWS)('outside the aws/ folders %s may not import the SDK: %s', (file, importLine) => {
  const errors = restrictedImportErrors(file, importLine);

  expect(errors).toEqual([expect.stringContaining('may import the AWS SDK')]);
});

test.each(DOMAIN_PAST_THE_EXAMPLE_MODULE)(
  "%s reads the example's domain through tools/example.ts only: %s",
  (file, importLine) => {
    const errors = restrictedImportErrors(file, importLine);

    expect(errors).toEqual([expect.stringContaining('through tools/example.ts')]);
  },
);

test.each(AGAINST_THE_LAYERS)(
  'inside the mechanism %s may not import a layer above its own: %s',
  (file, importLine) => {
    const errors = restrictedImportErrors(file, importLine);

    expect(errors).toEqual([expect.stringContaining('Layers point one way')]);
  },
);

test.each(WITH_THE_LAYERS)('inside the mechanism %s may import a layer below its own: %s', (file, importLine) => {
  expect(restrictedImportErrors(file, importLine)).toEqual([]);
});

test('no module of the mechanism imports against the layers', () => {
  const output = execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/eslint/bin/eslint.js'), '--format', 'json', 'lambdas/exactly-once'],
    { cwd: ROOT, encoding: 'utf8' },
  );

  const against = (JSON.parse(output) as { filePath: string; messages: { message: string }[] }[]).flatMap((file) =>
    file.messages
      .filter((m) => m.message.includes('Layers point one way'))
      .map((m) => `${file.filePath}: ${m.message}`),
  );

  expect(against).toEqual([]);
});

test('the CDK app may not import a handler module', () => {
  const errors = restrictedImportErrors(...HANDLER_INTO_APP);

  expect(errors).toEqual([expect.stringContaining('Name a handler module by its path')]);
});
