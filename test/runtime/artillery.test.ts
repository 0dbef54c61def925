import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { LOCAL_SECRET_ACCESS_KEY } from '@exactly-once/tools/local-runtime/api/verify-signature';
import { readLedgers } from '@exactly-once/tools/proof-kit/intents';
import { verifyStack } from '@exactly-once/tools/proof-kit/run';
import { useProofKitRuntime } from './proof-kit-fixture';

/**
 * The shipped Artillery scenario, run for real (`artillery run`, its phases
 * shortened, its target the local runtime) against the local API, which checks
 * SigV4 as API Gateway does: every request is accepted as signed, and the
 * verdict from the processor's intent ledger passes with intents checked (one
 * order per accepted key, none for a refused one, their effects).
 * @reachesExample runs the proof kit on the example's stack: removed with the example (npm run new:domain).
 */
const runtime = useProofKitRuntime('artillery');
const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');
const SCENARIO = path.join(ROOT, 'packages', 'tools', 'src', 'proof-kit', 'aws', 'artillery.yml');

interface ArtilleryReport {
  aggregate: { counters: Record<string, number> };
}

test('the shipped Artillery scenario runs against the local runtime, every request signed, and the verdict from its ledger passes', async () => {
  const ledger = path.join(runtime.work, 'artillery-intents.jsonl');
  const report = path.join(runtime.work, 'artillery-report.json');
  const target = runtime.target();

  const { stdout } = await run(
    path.join(ROOT, 'node_modules', '.bin', 'artillery'),
    [
      'run',
      '--target',
      target.apiUrl.replace(/\/$/, ''),
      '--overrides',
      JSON.stringify({ config: { phases: [{ name: 'short', duration: 4, arrivalRate: 3 }] } }),
      '--output',
      report,
      SCENARIO,
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        // No internet here, and no reason to report a test run anywhere.
        ARTILLERY_DISABLE_TELEMETRY: 'true',
        AWS_ACCESS_KEY_ID: 'AKIAARTILLERY',
        AWS_SECRET_ACCESS_KEY: LOCAL_SECRET_ACCESS_KEY,
        AWS_SESSION_TOKEN: '',
        AWS_PROFILE: '',
        AWS_EC2_METADATA_DISABLED: 'true',
        INTENT_LEDGER: ledger,
        RUN_ID: `art${Date.now().toString(36)}`,
      },
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const counters = (JSON.parse(fs.readFileSync(report, 'utf8')) as ArtilleryReport).aggregate.counters;
  console.log(stdout.slice(stdout.lastIndexOf('Summary report')));

  // Every virtual user's create and its retry (a replay) answered 201, its read (and a cancel) 200: as signed.
  const created = counters['vusers.created'];
  expect(created).toBeGreaterThanOrEqual(8);
  expect(counters['http.codes.403'] ?? 0).toBe(0);
  expect(counters['http.codes.422'] ?? 0).toBe(0);
  expect(counters['http.codes.201']).toBe(2 * created);
  expect(counters['http.codes.200']).toBe(counters['http.requests'] - 2 * created);

  const intents = readLedgers([ledger]);
  const { verification, drained, intentsChecked } = await verifyStack(target, { drainTimeoutMs: 180_000, intents });
  // The verdict, for the reader of a failure (and of the closing note).
  console.log(
    `verdict: ${JSON.stringify({ drained, intentsChecked, ...verification.counts, violations: verification.violations })}`,
  );

  expect(intents.filter((i) => i.replayed)).toHaveLength(created);
  expect(intents.filter((i) => i.status === 'no-response')).toHaveLength(2 * created);
  expect(verification.counts.intents).toBe(created);
  expect(intentsChecked).toBe(true);
  expect(drained).toBe(true);
  expect(verification.violations).toEqual([]);
}, 600_000);

test("the kit's own driver, signing each request as it sends it, is accepted by the checking API, and its ledger verifies", async () => {
  const ledger = path.join(runtime.work, 'driver-intents.jsonl');
  process.env.INTENT_LEDGER = ledger;
  let results: Awaited<ReturnType<typeof runtime.run>>;
  try {
    results = await runtime.run([], 7);
  } finally {
    delete process.env.INTENT_LEDGER;
  }

  const intents = readLedgers([ledger]);
  const { verification, intentsChecked } = await verifyStack(runtime.target(), { drainTimeoutMs: 180_000, intents });

  expect(results.passed).toBe(true);
  expect(intents.some((i) => i.status === 403)).toBe(false);
  expect(intentsChecked).toBe(true);
  expect(verification.counts.intents).toBe(results.verification.counts.intents);
  expect(verification.violations).toEqual([]);
}, 600_000);
