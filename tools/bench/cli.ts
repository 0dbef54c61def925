import { example } from '../example';

/**
 * npm run bench: the example's benchmark (its tooling module's `bench`, loaded on demand), built from
 * this folder's parts. An example without one gets a one-line refusal.
 */
async function main(): Promise<number> {
  const load = example().bench;
  if (load === undefined) {
    console.error("bench: the example's tooling module gives no benchmark (`bench`, tools/example.ts)");
    return 2;
  }
  const bench = await load();
  return bench.run(process.argv.slice(2));
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('bench failed:', error);
    process.exit(1);
  },
);
