'use strict';
/**
 * One Lambda execution environment: a child process that loads one function's
 * bundled code once (cold start) and then runs one invocation at a time, sent
 * by the function host over IPC. Plain JavaScript on purpose: it runs the
 * bundle with bare Node, as Lambda does, with no TypeScript loader in between.
 *
 * Protocol (parent -> worker): { type: 'invoke', requestId, event, deadline, context }
 * (worker -> parent): { type: 'ready' } | { type: 'init-error', error } |
 *                      { type: 'result', requestId, ok, payload | error }
 * Uncaught errors are not caught here: they crash the process, and the host
 * fails the invocation that was running, as Lambda does.
 */
const dns = require('node:dns');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

// RFC 6761: *.localhost is loopback. fauxqs returns queue URLs on
// sqs.<region>.localhost, and an SQS client without an explicit endpoint sends
// its calls to the queue URL's host; resolve it here, as many laptops do.
const originalLookup = dns.lookup;
dns.lookup = function lookup(hostname, options, callback) {
  if (typeof options === 'function') return lookup(hostname, {}, options);
  if (typeof hostname === 'string' && hostname.endsWith('.localhost')) {
    const opts = typeof options === 'number' ? { family: options } : options || {};
    if (opts.all) return process.nextTick(callback, null, [{ address: '127.0.0.1', family: 4 }]);
    return process.nextTick(callback, null, '127.0.0.1', 4);
  }
  return originalLookup.call(dns, hostname, options, callback);
};

// The host going away (even killed) must not leave this process behind.
process.on('disconnect', () => process.exit(0));

function serializeError(error) {
  if (error instanceof Error) {
    return {
      errorType: error.name || 'Error',
      errorMessage: error.message,
      // The host's own frames are noise in the function's error.
      stackTrace: (error.stack || '')
        .split('\n')
        .slice(1)
        .map((l) => l.trim())
        .filter((l) => !l.includes(__filename) && !l.includes('node:internal') && !l.includes('new Promise')),
    };
  }
  return { errorType: 'Error', errorMessage: String(error), stackTrace: [] };
}

async function loadHandler() {
  const taskRoot = process.env.LAMBDA_TASK_ROOT;
  const spec = process.env._HANDLER || 'index.handler';
  const dot = spec.lastIndexOf('.');
  const modulePath = path.join(taskRoot, spec.slice(0, dot));
  const exportPath = spec.slice(dot + 1).split('.');
  let mod;
  const candidates = ['.js', '.cjs', '.mjs'].map((ext) => modulePath + ext);
  const file = candidates.find((f) => require('node:fs').existsSync(f));
  if (file === undefined) {
    const error = new Error(`Cannot find module '${spec.slice(0, dot)}'`);
    error.name = 'Runtime.ImportModuleError';
    throw error;
  }
  try {
    mod = require(file);
  } catch (error) {
    if (error && error.code === 'ERR_REQUIRE_ESM') mod = await import(pathToFileURL(file).href);
    else throw error;
  }
  let handler = mod;
  for (const key of exportPath) handler = handler == null ? undefined : handler[key];
  if (typeof handler !== 'function' && mod && mod.default) {
    handler = mod.default;
    for (const key of exportPath) handler = handler == null ? undefined : handler[key];
  }
  if (typeof handler !== 'function') {
    const error = new Error(`${spec} is undefined or not exported`);
    error.name = 'Runtime.HandlerNotFound';
    throw error;
  }
  return handler;
}

function lambdaContext(message) {
  const c = message.context;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: c.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: c.invokedFunctionArn,
    memoryLimitInMB: String(c.memoryLimitInMB),
    awsRequestId: message.requestId,
    logGroupName: c.logGroupName,
    logStreamName: c.logStreamName,
    getRemainingTimeInMillis: () => Math.max(0, message.deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function run(handler, message) {
  return new Promise((resolve, reject) => {
    const context = lambdaContext(message);
    const callback = (error, result) => (error ? reject(error) : resolve(result));
    context.done = callback;
    context.fail = (error) => reject(error);
    context.succeed = (result) => resolve(result);
    try {
      const returned = handler(message.event, context, callback);
      if (returned && typeof returned.then === 'function') returned.then(resolve, reject);
      else if (handler.length < 3) resolve(returned);
    } catch (error) {
      reject(error);
    }
  });
}

loadHandler().then(
  (handler) => {
    process.on('message', (message) => {
      if (!message || message.type !== 'invoke') return;
      run(handler, message).then(
        (payload) =>
          process.send({
            type: 'result',
            requestId: message.requestId,
            ok: true,
            payload: payload === undefined ? null : payload,
          }),
        (error) =>
          process.send({ type: 'result', requestId: message.requestId, ok: false, error: serializeError(error) }),
      );
    });
    process.send({ type: 'ready' });
  },
  (error) => {
    const serialized = serializeError(error);
    if (error instanceof SyntaxError) serialized.errorType = 'Runtime.UserCodeSyntaxError';
    process.send({ type: 'init-error', error: serialized }, () => process.exit(1));
  },
);
