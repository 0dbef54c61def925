// Artillery processor for tools/proof-kit/aws/artillery.yml: SigV4-signs each request with the AWS SDK's
// own signer and the worker's default credentials (the Lambda or Fargate task role).
'use strict';
const crypto = require('node:crypto');
const { SignatureV4 } = require('@smithy/signature-v4');
const { Sha256 } = require('@aws-crypto/sha256-js');
const { defaultProvider } = require('@aws-sdk/credential-provider-node');

let signer;
// Built on first use: the worker's region and credentials are known by then.
function getSigner() {
  signer ??= new SignatureV4({
    service: 'execute-api',
    region: process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION,
    sha256: Sha256,
    credentials: defaultProvider(),
  });
  return signer;
}

function newIdempotencyKey(context, _events, done) {
  context.vars.idempotencyKey = crypto.randomUUID();
  done();
}

function maybeCancel(context, _events, done) {
  // One order in ten is cancelled, which releases its stock reservation.
  context.vars.cancel = Math.random() < 0.1;
  done();
}

async function signRequest(requestParams, context) {
  const url = new URL(requestParams.url, context.vars.target);
  const body = requestParams.json !== undefined ? JSON.stringify(requestParams.json) : requestParams.body;
  const headers = { ...requestParams.headers, host: url.host };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const signed = await getSigner().sign({
    method: requestParams.method || 'GET',
    protocol: url.protocol,
    hostname: url.hostname,
    path: url.pathname,
    headers,
    body,
  });
  requestParams.headers = signed.headers;
  if (requestParams.json !== undefined) {
    delete requestParams.json;
    requestParams.body = body;
  }
}

module.exports = { newIdempotencyKey, maybeCancel, signRequest };
