import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';
import { DOCS, htmlReport } from './report-html';
import type { RunResults } from './report-results';

/**
 * The run's results: a terminal summary, a JSON file and a self-contained HTML
 * report with charts. Costs use the unit prices of prices.ts, stated with their date.
 */
export { UNIT_PRICES } from './prices';
export type { CallCounts, FaultEvidence, RunResults, Verdict } from './report-results';
export { summarize, verdictLine, verdictOf } from './report-results';
export { cumulativePoints, percentile, timelineBucketSeconds } from './report-statistics';
export { chaosSummary, poisonInWords, provenanceInWords, statusesInWords, terminalSummary } from './report-words';
export { consumerColors, pipelineCharts } from './report-charts';
export { glossaryTerms, htmlReport, type HtmlOptions } from './report-html';

/** The repository's root, where docs/ is: the report links to docs/proof-kit.md relative to where it is written. */
const REPOSITORY = PROJECT_DIR;

export function writeReports(r: RunResults, directory: string): { json: string; html: string } {
  fs.mkdirSync(directory, { recursive: true });
  const json = path.join(directory, `${r.runId}.json`);
  const html = path.join(directory, `${r.runId}.html`);
  const docsHref = path.relative(path.resolve(directory), path.join(REPOSITORY, DOCS)).split(path.sep).join('/');
  fs.writeFileSync(json, `${JSON.stringify(r, null, 2)}\n`);
  fs.writeFileSync(html, htmlReport(r, { docsHref }));
  return { json, html };
}
