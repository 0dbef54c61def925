import '../cli/require-node'; // first: an unsupported Node stops here, before anything loads
import { assertLocalRuntimeAnswers, localStackOutputs } from '../stack';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { localRoleSessionToken, signedFetch } from './api/sign';

/**
 * Sends one SigV4-signed request to the local API (or any URL), e.g.
 *   npx tsx tools/local-runtime/call.ts POST /orders '{"customerId":"c1","items":[...]}' --idempotency-key order-1
 *   npx tsx tools/local-runtime/call.ts GET /orders/<orderId> --access-key AKIAALICE
 *   npx tsx tools/local-runtime/call.ts GET /orders/<orderId> --role OrderWriter --session task-2
 * Options: --idempotency-key K (sent as the sf-string "K"), --header 'Name: value',
 * --access-key ID (the caller, as an IAM user; default AKIALOCALEXAMPLE),
 * --role NAME [--session NAME] (the caller is the role; sent as a session of it, default session "local-cli"),
 * --url BASE (default: .local/outputs.json apiUrl).
 */
const USAGE =
  'usage: npx tsx tools/local-runtime/call.ts METHOD PATH [JSON_BODY] [--idempotency-key K] [--header "Name: value"] [--access-key ID] [--role NAME [--session NAME]] [--url BASE]';

async function main(argv: string[]): Promise<number> {
  const positional: string[] = [];
  const headers: Record<string, string> = {};
  let accessKeyId: string | undefined;
  let role: string | undefined;
  let session: string | undefined;
  let base: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value\n${USAGE}`);
      return v;
    };
    if (arg === '--idempotency-key') {
      const key = value();
      headers['Idempotency-Key'] = key.startsWith('"') ? key : `"${key}"`;
    } else if (arg === '--header' || arg === '-H') {
      const [name, ...rest] = value().split(':');
      headers[name.trim()] = rest.join(':').trim();
    } else if (arg === '--access-key') accessKeyId = value();
    else if (arg === '--role') role = value();
    else if (arg === '--session') session = value();
    else if (arg === '--url') base = value();
    else positional.push(arg);
  }
  const [method, pathname, body] = positional;
  if (method === undefined || pathname === undefined) throw new Error(USAGE);
  if (session !== undefined && role === undefined) throw new Error(`--session needs --role\n${USAGE}`);
  // Role sessions use temporary credentials, whose access key ids start with ASIA.
  const sessionToken = role === undefined ? undefined : localRoleSessionToken(role, session ?? 'local-cli');
  if (role !== undefined) accessKeyId ??= 'ASIALOCALEXAMPLE';
  const outputs = readOutputs();
  if (base === undefined && outputs?.apiUrl !== undefined)
    await assertLocalRuntimeAnswers(localStackOutputs(outputsFile()), outputsFile(), outputs.apiUrl);
  base ??= outputs?.apiUrl;
  if (base === undefined) throw new Error('No API URL: start the runtime (npm start) or pass --url');
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
  return response.ok ? 0 : 1;
}

const outputsFile = () =>
  path.resolve(process.env.OUTPUTS_FILE ?? path.join(__dirname, '..', '..', '.local', 'outputs.json'));

function readOutputs(): { apiUrl?: string; region?: string } | undefined {
  const file = outputsFile();
  return fs.existsSync(file)
    ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { apiUrl?: string; region?: string })
    : undefined;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(error.message);
    process.exit(2);
  },
);
