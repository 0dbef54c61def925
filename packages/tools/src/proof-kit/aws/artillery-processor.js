// Artillery processor for packages/tools/src/proof-kit/aws/artillery.yml.
//
// Artillery runs a request's beforeRequest hooks BEFORE it renders the {{ }} templates of the URL, headers and
// body, so a signature made there over a template covers the placeholder, not what is sent. Here no signed part
// is a template: a function step chooses every value (key, customer, SKU, the body) and the hook sets the
// request's URL, headers and body itself, then signs them with the AWS SDK's SigV4 signer. A key's retry sends
// the very body of its first request, so it is a replay (or a 409), never a 422 for another body.
//
// Credentials: the SDK's default chain (the worker's role on Lambda or Fargate, your profile elsewhere),
// asked per request: the provider is memoized and refreshes credentials before they expire. Locally, any
// access key id with the local API's secret access key ("local").
//
// Intent ledger: with INTENT_LEDGER=<file> (or "stdout", for workers whose output goes to CloudWatch Logs),
// each create is written as a JSON line: what `npm run loadtest -- --verify-only --intents <files...>` checks.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const { SignatureV4 } = require('@smithy/signature-v4');
const { defaultProvider } = require('@aws-sdk/credential-provider-node');

const LEDGER_MARK = 'EO_INTENT ';
const LOOPBACK = /^https?:\/\/(?:127\.0\.0\.1|localhost|\[::1\])(?::\d+)?(?:\/|$)/i;
/** The local runtime's account: a local caller is the IAM user its access key id names. */
const LOCAL_ACCOUNT = '000000000000';

/** SHA-256 and HMAC-SHA-256 on Node's native crypto, in the shape the SDK's signer takes. */
class NodeSha256 {
  constructor(secret) {
    this.secret = secret;
    this.reset();
  }
  update(data) {
    this.hash.update(typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data));
  }
  digest() {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset() {
    this.hash =
      this.secret === undefined
        ? crypto.createHash('sha256')
        : crypto.createHmac('sha256', typeof this.secret === 'string' ? this.secret : Buffer.from(this.secret));
  }
}

const credentials = defaultProvider();
let signer;
let caller;

/** The API's base URL: `--target`/config.target once it is a URL, else API_URL. */
function baseUrl(context) {
  const target = context.vars.target;
  const base = typeof target === 'string' && !target.includes('{{') ? target : process.env.API_URL;
  if (!base) throw new Error('Set API_URL to the stack ApiUrl output (or pass --target)');
  return base.replace(/\/+$/, '');
}

/** The region in the API's host (<id>.execute-api.<region>.amazonaws.com), else the worker's. */
function regionOf(base) {
  const match = /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com/.exec(base);
  return match ? match[1] : process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1';
}

function getSigner(base) {
  signer ??= new SignatureV4({ service: 'execute-api', region: regionOf(base), sha256: NodeSha256, credentials });
  return signer;
}

/** Who signs, as STS names it: the intent ledger's caller. Locally, the IAM user of the access key id. */
function callerArn(base) {
  caller ??= (async () => {
    if (LOOPBACK.test(base)) return `arn:aws:iam::${LOCAL_ACCOUNT}:user/${(await credentials()).accessKeyId}`;
    const { STSClient, GetCallerIdentityCommand } = require('@aws-sdk/client-sts');
    const sts = new STSClient({ region: regionOf(base), credentials });
    try {
      return (await sts.send(new GetCallerIdentityCommand({}))).Arn;
    } finally {
      sts.destroy();
    }
  })();
  return caller;
}

/** One value of a list (Artillery samples list variables once per virtual user: a one-value list then). */
function pick(value, fallback) {
  const list = Array.isArray(value) ? value : value === undefined ? [fallback] : [value];
  return String(list[crypto.randomInt(list.length)]);
}

/**
 * Chooses everything the create sends, before any request: its key, a customer and a SKU from the
 * scenario's lists (prefixed with the run's id, shared by every worker of one run, so this run's stock and
 * points are its own), and the body, kept for the key's retry.
 */
function chooseOrder(context, _events, done) {
  const run = process.env.RUN_ID || context.vars.$testId || 'artillery';
  context.vars.idempotencyKey = crypto.randomUUID();
  context.vars.orderBody = JSON.stringify({
    customerId: `${run}-${pick(context.vars.customers, 'cust-1')}`,
    items: [{ sku: `${run}-${pick(context.vars.skus, 'sku-1')}`, quantity: 2, unitPriceCents: 1250 }],
  });
  done();
}

function maybeCancel(context, _events, done) {
  // One order in ten is cancelled, which releases its stock reservation.
  context.vars.cancel = Math.random() < 0.1;
  done();
}

/** Sets the request to exactly what is sent and signs it, nothing left for Artillery to render. */
async function sign(requestParams, context, method, path, headers, body) {
  const base = baseUrl(context);
  const url = new URL(`${base}${path}`);
  const toSign = { host: url.host, ...headers };
  if (body !== undefined) toSign['content-type'] = 'application/json';
  const signed = await getSigner(base).sign({
    method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query: {},
    headers: toSign,
    body,
  });
  requestParams.method = method;
  requestParams.url = url.toString();
  delete requestParams.uri;
  delete requestParams.json;
  requestParams.headers = signed.headers;
  if (body === undefined) delete requestParams.body;
  else requestParams.body = body;
}

/** POST /orders under the scenario's key, with the body chosen for it. */
async function signCreate(requestParams, context) {
  const key = `"${context.vars.idempotencyKey}"`; // the IETF draft's form: an RFC 9651 sf-string
  await sign(requestParams, context, 'POST', '/orders', { 'idempotency-key': key }, context.vars.orderBody);
  // Sent, answer unknown until recordCreate writes it: a create whose answer never comes (a timeout, a lost
  // connection) may still have made its order, which the verifier must not count as made for a refused key.
  await writeIntent(context, 'no-response');
}

/** GET /orders/{the order the create named}. */
async function signRead(requestParams, context) {
  return sign(requestParams, context, 'GET', `/orders/${encodeURIComponent(context.vars.orderId)}`, {});
}

/** POST /orders/{the order}/cancel. */
async function signCancel(requestParams, context) {
  return sign(requestParams, context, 'POST', `/orders/${encodeURIComponent(context.vars.orderId)}/cancel`, {});
}

let ledger;
/** Writes what a create asked for and what it was told (so far) to the intent ledger, if INTENT_LEDGER names one. */
async function writeIntent(context, status, response) {
  const destination = process.env.INTENT_LEDGER;
  if (!destination) return;
  const record = {
    caller: await callerArn(baseUrl(context)),
    key: context.vars.idempotencyKey,
    status,
    ...(status === 201 ? { response: String(response.body) } : {}),
    requestSha256: crypto.createHash('sha256').update(context.vars.orderBody).digest('hex'),
    replayed: response !== undefined && String(response.headers['idempotent-replayed']) === 'true',
    at: Date.now(),
  };
  const line = `${LEDGER_MARK}${JSON.stringify(record)}\n`;
  if (destination === 'stdout') process.stdout.write(line);
  else {
    ledger ??= fs.openSync(destination, 'a');
    fs.writeSync(ledger, line);
  }
}

/** Writes the create's answer to the intent ledger. */
async function recordCreate(_requestParams, response, context) {
  await writeIntent(context, response.statusCode, response);
}

module.exports = { chooseOrder, maybeCancel, signCreate, signRead, signCancel, recordCreate };
