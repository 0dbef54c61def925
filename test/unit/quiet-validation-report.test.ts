/**
 * The infra project's console filter (test/support/quiet-validation-report.ts): CDK's warnings-only
 * validation report is dropped, anything else printed on console.error still shows.
 */
test('drops a warnings-only CDK validation report, lets a report with an error and any other error through', async () => {
  const original = console.error;
  const printed: string[] = [];
  console.error = (...args: unknown[]) => void printed.push(args.map(String).join(' '));
  try {
    await jest.isolateModulesAsync(async () => {
      await import('../support/quiet-validation-report');
    });
    const report = (line: string) =>
      `${line}\n   ProdStack aws-cdk-lib.Stack\nA copy of this report can be found in: x.json`;

    console.error(report('WARNING stage=prod without -c alarmEmail=...'));
    console.error(report('ERROR [Correctness/InboxTtl] ...'));
    console.error('something else went wrong');

    expect(printed).toEqual([report('ERROR [Correctness/InboxTtl] ...'), 'something else went wrong']);
  } finally {
    console.error = original;
  }
});
