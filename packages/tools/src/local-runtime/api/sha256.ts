import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

type Data = string | ArrayBuffer | ArrayBufferView;

function bytes(data: Data): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/**
 * SHA-256 (or HMAC-SHA-256 with a secret) on Node's native crypto, in the
 * shape the SDK's SigV4 signer takes (`sha256:`). A signer on a load
 * generator's hot path hashes every body and derives a key per request: the
 * pure-JS hash costs the generator the CPU it needs to send.
 *
 * @example
 * ```ts
 * const signer = new SignatureV4({ service: 'execute-api', region: 'eu-west-1', sha256: NodeSha256, credentials });
 * ```
 */
export class NodeSha256 {
  private hash: Hash | Hmac;

  constructor(private readonly secret?: Data) {
    this.hash = this.fresh();
  }

  update(data: Data): void {
    this.hash.update(bytes(data));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }

  reset(): void {
    this.hash = this.fresh();
  }

  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
}
