import * as fs from 'node:fs';
import * as path from 'node:path';
import type { App } from 'aws-cdk-lib';

/**
 * The cdk.json context (feature flags included), because `new App()` in a test
 * does not read cdk.json; plus no bundling, which tests of the template do not need.
 */
export function cdkContext(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const cdkJson = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8'));
  return { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...extra };
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
