import * as fs from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { readConfig } from '../../lib/config';

/**
 * The cdk.json context (feature flags included), because `new App()` in a test
 * does not read cdk.json; plus no bundling, which tests of the template do not need.
 */
export function cdkContext(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const cdkJson = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8'));
  return { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...extra };
}

/** readConfig's one-line error for a context, or undefined when it accepts it. */
export function configError(context: Record<string, unknown>): string | undefined {
  try {
    readConfig(new App({ context }));
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export interface SynthFinding {
  /** The construct path of the resource the error is on. */
  path: string;
  message: string;
}

/**
 * Synthesizes the app and returns every error of its validation report ([] when
 * synth succeeds). With `@aws-cdk/core:annotationsInValidationReport`, an error
 * annotation makes `app.synth()` throw that report instead of returning.
 */
export function synthErrors(app: App): SynthFinding[] {
  try {
    app.synth();
    return [];
  } catch (error) {
    const report = error instanceof Error ? error.message : String(error);
    const findings = [...report.matchAll(/^ERROR (.+) \((.+?)\)\n\s+(\S+) \(/gm)].map(([, message, source, path]) => ({
      path,
      message: source === 'Annotation' ? message : `${message} (${source})`,
    }));
    if (findings.length === 0) throw error; // not a validation report: let the real failure show
    return findings;
  }
}
