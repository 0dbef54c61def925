import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { build } from 'esbuild';
import { RELAY_ENTRY } from '@exactly-once/cdk/outbox-relay';
import { entryPointPath, lambdaBundling, type FunctionBuild } from '@exactly-once/cdk/function-defaults';
import { PROBE_CONSUMERS, PROBE_FIFO_SPEC, PROBE_SPEC } from '../exactly-once/fixtures/probe-spec';

/**
 * Fault code is in a bundle only when the stack is synthesized with it: the
 * relay and the probe consumers' entry points (a standard and a FIFO consumer
 * on the mechanism's public surface, as new:consumer scaffolds one) are bundled
 * here exactly as the function construct bundles them (its `lambdaBundling`),
 * and the output is searched. (Which build a stage's configuration picks:
 * test/infra/stage-config.test.ts.)
 */
const FAULT_ENTRIES: string[] = [...PROBE_CONSUMERS.map((c) => c.entry), RELAY_ENTRY];

/** Strings only fault code carries. `\bFAULT_` skips the SDK's DEFAULT_* settings. */
const FAULT_MARKERS: Record<string, RegExp> = {
  crashAfterEffect: /crashAfterEffect/,
  providerOutage: /providerOutage/,
  producerResend: /producerResend/,
  relayCrashAfterPublish: /relayCrashAfterPublish/,
  FaultPlanActive: /FaultPlanActive/,
  'FAULT_*': /\bFAULT_[A-Z]/,
};
/**
 * What the inbox bypass (faults/inbox-bypass.ts) leaves in a bundle. Minified, `withoutInbox` loses its
 * name, so each marker is a string the code keeps: the plan's `disableInboxClaim` list (read by
 * `parseInboxBypass` and `inboxClaimDisabled`) and the wrapper's test for an effect's first-write guard.
 * The local runtime build must carry both, so a marker that stops matching the code fails that test.
 */
const INBOX_BYPASS_MARKERS: Record<string, RegExp> = {
  disableInboxClaim: /disableInboxClaim/,
  withoutInbox: /\.includes\(["'`]attribute_not_exists["'`]\)/,
};

const NONE: FunctionBuild = { faultInjection: false, inboxBypass: false };
const FAULTS: FunctionBuild = { faultInjection: true, inboxBypass: false };
const LOCAL: FunctionBuild = { faultInjection: true, inboxBypass: true };

async function bundle(entry: string, functionBuild: FunctionBuild): Promise<string> {
  const options = lambdaBundling(functionBuild);
  const result = await build({
    entryPoints: [entryPointPath(entry)],
    bundle: true,
    platform: 'node',
    write: false,
    minify: options.minify,
    target: options.target,
    format: options.format === OutputFormat.CJS ? 'cjs' : 'esm',
    external: options.externalModules,
    define: options.define,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

function markersIn(code: string, markers: Record<string, RegExp>): string[] {
  return Object.entries(markers)
    .filter(([, pattern]) => pattern.test(code))
    .map(([name]) => name);
}

describe.each(FAULT_ENTRIES)('the %s bundle', (entryPoint) => {
  test('built without fault injection has no fault code and no inbox bypass', async () => {
    const code = await bundle(entryPoint, NONE);

    expect(markersIn(code, { ...FAULT_MARKERS, ...INBOX_BYPASS_MARKERS })).toEqual([]);
  });

  test('built with fault injection has the fault code, still without the inbox bypass', async () => {
    const code = await bundle(entryPoint, FAULTS);

    expect(
      markersIn(code, { FaultPlanActive: FAULT_MARKERS.FaultPlanActive, 'FAULT_*': FAULT_MARKERS['FAULT_*'] }),
    ).toEqual(['FaultPlanActive', 'FAULT_*']);
    expect(markersIn(code, INBOX_BYPASS_MARKERS)).toEqual([]);
  });
});

test.each<[string, string[]]>([
  [PROBE_SPEC.entry, ['crashAfterEffect', 'providerOutage']],
  [RELAY_ENTRY, ['producerResend', 'relayCrashAfterPublish']],
])('the %s bundle with fault injection carries its faults', async (entryPoint, faults) => {
  const code = await bundle(entryPoint, FAULTS);

  expect(markersIn(code, FAULT_MARKERS)).toEqual(expect.arrayContaining(faults));
});

test('only the local runtime build carries the inbox bypass', async () => {
  const code = await bundle(PROBE_FIFO_SPEC.entry, LOCAL);

  expect(markersIn(code, INBOX_BYPASS_MARKERS)).toEqual(['disableInboxClaim', 'withoutInbox']);
});
