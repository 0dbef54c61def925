/**
 * Runs fauxqs for the runtime, on loopback only and on a port the OS picks:
 * `node --require exit-with-parent.js fauxqs-loopback.mjs`, spawned with an IPC
 * channel, FAUXQS_ENTRY = fauxqs's module URL. fauxqs always listens on
 * 0.0.0.0 (every interface, so anyone on the network could use the queues);
 * its listen call is narrowed to 127.0.0.1 here. The bound port goes back to
 * the runtime over IPC: no port is picked first and bound later, so no other
 * process can take it in between.
 */
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [options] = args;
  if (options !== null && typeof options === 'object' && (options.host === '0.0.0.0' || options.host === '::'))
    args[0] = { ...options, host: '127.0.0.1' };
  return listen.apply(this, args);
};

const { startFauxqs } = await import(process.env.FAUXQS_ENTRY);
const server = await startFauxqs({
  port: Number(process.env.FAUXQS_PORT ?? 0),
  logger: false,
  defaultRegion: process.env.FAUXQS_DEFAULT_REGION,
});
process.send?.({ fauxqsPort: server.port });
