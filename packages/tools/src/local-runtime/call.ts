import '../cli/require-node'; // first: an unsupported Node stops here, before anything loads
import { assertLocalRuntimeAnswers, localStackOutputs, RuntimeNotRunningError } from '../stack';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { EXIT, exitStatusOf, parseCommandLine, UsageError } from '../cli/exit';
import { localRoleSessionToken, signedFetch } from './api/sign';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';

/**
 * `npm run call -- METHOD PATH [JSON_BODY] [options]`: sends one SigV4-signed request to the local API
 * (or any URL) and prints the status, the headers that matter and the body.
 */
const USAGE = `Usage: npm run call -- METHOD PATH [JSON_BODY] [options]
       (or npx tsx packages/tools/src/local-runtime/call.ts METHOD PATH [JSON_BODY] [options])
  e.g. npm run call -- POST /orders '{"customerId":"c1","items":[...]}' --idempotency-key order-1
       npm run call -- GET /orders/<orderId> --access-key AKIAALICE
       npm run call -- GET /orders/<orderId> --role OrderWriter --session task-2
Options:
  --idempotency-key K      sent as the Idempotency-Key header, the sf-string "K"
  -H, --header 'N: v'      another header (repeat the flag for more)
  --access-key ID          the caller, as an IAM user (default AKIALOCALEXAMPLE)
  --role NAME              the caller is this role, as a session of it (temporary credentials)
  --session NAME           with --role: the session's name (default local-cli)
  --url BASE               the API's base URL (default: apiUrl in .local/outputs.json, from npm start)
  -h, --help               this text
The local API takes the access key id as the caller and does not verify signatures.
Exit codes: 0 a 2xx answer, 1 any other answer or a failure, 2 usage error, 3 the local runtime is not running.`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'idempotency-key': { type: 'string' },
        header: { type: 'string', short: 'H', multiple: true },
        'access-key': { type: 'string' },
        role: { type: 'string' },
        session: { type: 'string' },
        url: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }),
  );
  if (values.help) {
    console.log(USAGE);
    return EXIT.ok;
  }
  const headers: Record<string, string> = {};
  const key = values['idempotency-key'];
  if (key !== undefined) headers['Idempotency-Key'] = key.startsWith('"') ? key : `"${key}"`;
  for (const header of values.header ?? []) {
    const [name, ...rest] = header.split(':');
    if (rest.length === 0) throw new UsageError(`--header needs "Name: value", got "${header}"`);
    headers[name.trim()] = rest.join(':').trim();
  }
  const role = values.role;
  const session = values.session;
  let accessKeyId = values['access-key'];
  let base = values.url;
  const [method, pathname, body, ...extra] = positionals;
  if (method === undefined || pathname === undefined) throw new UsageError('METHOD and PATH are required');
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}"`);
  if (session !== undefined && role === undefined) throw new UsageError('--session needs --role');
  // Role sessions use temporary credentials, whose access key ids start with ASIA.
  const sessionToken = role === undefined ? undefined : localRoleSessionToken(role, session ?? 'local-cli');
  if (role !== undefined) accessKeyId ??= 'ASIALOCALEXAMPLE';
  const outputs = readOutputs();
  if (base === undefined && outputs?.apiUrl !== undefined)
    await assertLocalRuntimeAnswers(localStackOutputs(outputsFile()), outputsFile(), outputs.apiUrl);
  base ??= outputs?.apiUrl;
  if (base === undefined) throw new RuntimeNotRunningError('No API URL: start the runtime (npm start) or pass --url');
  const response = await signedFetch(`${base.replace(/\/$/, '')}${pathname}`, {
    method: method.toUpperCase(),
    body,
    headers,
    accessKeyId,
    sessionToken,
    region: outputs?.region,
  });
  const text = await response.text();
  console.log(`HTTP ${response.status}`);
  for (const name of ['content-type', 'location', 'idempotent-replayed', 'retry-after']) {
    const v = response.headers.get(name);
    if (v !== null) console.log(`${name}: ${v}`);
  }
  try {
    console.log(JSON.stringify(JSON.parse(text), null, 2));
  } catch {
    console.log(text);
  }
  return response.ok ? EXIT.ok : EXIT.failed;
}

const outputsFile = () => path.resolve(process.env.OUTPUTS_FILE ?? path.join(PROJECT_DIR, '.local', 'outputs.json'));

function readOutputs(): { apiUrl?: string; region?: string } | undefined {
  const file = outputsFile();
  return fs.existsSync(file)
    ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { apiUrl?: string; region?: string })
    : undefined;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    const status = exitStatusOf(error);
    console.error(status === EXIT.usage ? `${error.message}\n\n${USAGE}` : `call: ${error.message}`);
    process.exit(status);
  },
);
