import '../cli/require-node'; // first: an unsupported Node stops here, before anything loads
import './quiet'; // before the mechanism loads: Powertools reads its settings then
import { setSpanSink } from '@exactly-once/runtime/trace/spans';
import { runBench, USAGE } from './run';
import { EXIT, isUsageError } from '../cli/exit';

// The consumers the bench runs in its own process log a span per hop per message: not what it measures,
// and thousands of lines would bury its figures. The functions it runs under the local runtime still log theirs.
setSpanSink(() => undefined);

/** npm run bench: the benchmark of the example the tools are configured with (run.ts), from its proof domain and consumer specs. */
runBench(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (isUsageError(error)) {
      console.error(`bench: ${error.message}\n${USAGE}`);
      process.exit(EXIT.usage);
    }
    console.error('bench failed:', error);
    process.exit(EXIT.failed);
  },
);
