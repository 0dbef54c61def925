import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cdkContext } from './cdk-app';

/**
 * cdk-nag (AwsSolutions) as a CDK validation plugin during synthesis, and the readers of its report,
 * for the infra tests that hold a stack to zero unacknowledged findings.
 */
export interface Violation {
  ruleName: string;
  severity: string;
  violatingConstructs: { constructPath: string }[];
}

export interface NagResult {
  app: App;
  error?: Error;
  violations: Violation[];
}

const outdirs: string[] = [];

/** Removes the output folders synthWithNag made (call it in afterAll). */
export function removeNagOutdirs(): void {
  for (const dir of outdirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** Synthesizes an app with the AwsSolutions checks; returns the error (if any) and the report's violations. */
export function synthWithNag(build: (app: App) => void, context: Record<string, unknown> = {}): NagResult {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'nag-'));
  outdirs.push(outdir);
  const app = new App({ context: cdkContext(context), outdir });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  build(app);

  let error: Error | undefined;
  // A failing validation prints its report; the assertions read it from the file instead.
  const quiet = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    app.synth();
  } catch (e) {
    error = e as Error;
  } finally {
    quiet.mockRestore();
  }

  const reportFile = path.join(outdir, 'validation-report.json');
  const report = fs.existsSync(reportFile)
    ? (JSON.parse(fs.readFileSync(reportFile, 'utf8')) as { pluginReports: { violations: Violation[] }[] })
    : { pluginReports: [] };
  return { app, error, violations: report.pluginReports.flatMap((r) => r.violations) };
}

/** `RuleId @ path` for every finding, for readable failure output. */
export function findings(violations: Violation[]): string[] {
  return violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.ruleName} @ ${c.constructPath}`));
}

/** Only cdk-nag's findings (the report also carries other plugins', e.g. the project's correctness aspects). */
export function nagFindings(violations: Violation[]): string[] {
  return findings(violations.filter((v) => v.ruleName.startsWith('AwsSolutions-')));
}

/** Every acknowledgement of a rule in the tree, with where it is and the reason it gives. */
export function acknowledgementsIn(root: IConstruct): { path: string; id: string; reason: unknown }[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, unknown>).map(([id, reason]) => ({
          path: construct.node.path,
          id,
          reason,
        })),
      ),
  );
}
