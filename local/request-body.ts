import type { IncomingMessage } from 'node:http';

/**
 * A request's body (null when empty), or 'tooLarge' without buffering what is over `maxBytes`:
 * a declared length over it is refused at once, and a body that grows past it is drained and
 * dropped, so the connection stays usable for the refusal. Used by the API Gateway emulation
 * (local/server.ts) and the DynamoDB limits engine.
 */
export function readBodyWithin(req: IncomingMessage, maxBytes: number): Promise<Buffer | null | 'tooLarge'> {
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
    req.resume();
    return Promise.resolve('tooLarge');
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        resolve('tooLarge'); // the rest is drained and dropped
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(size === 0 ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
