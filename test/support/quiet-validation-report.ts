/**
 * Jest's setup for the infra project: CDK prints its validation report on the console when a synth has
 * warnings only (a prod stack without an alarm e-mail, a provider through the recording double). The
 * tests that make those warnings assert them through Annotations; the printed copy would be noise every
 * green run shows. Only a warnings-only report is dropped: anything else printed on console.error,
 * and any report with an error in it (which fails the synth anyway), goes through as it was.
 */
const printError = console.error.bind(console);

console.error = (...args: unknown[]): void => {
  const text = args.map(String).join(' ');
  if (text.includes('A copy of this report can be found in') && !/\bERROR\b/.test(text)) return;
  printError(...args);
};

export {};
