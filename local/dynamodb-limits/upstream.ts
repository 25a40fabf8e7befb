import { Agent, request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';

/** An answer of DynamoDB Local: status, headers and the whole body (answers are at most a few MB). */
export type UpstreamAnswer = { status: number; headers: IncomingHttpHeaders; body: Buffer };

/** A JSON answer, parsed (undefined when the body is not JSON). */
export type JsonAnswer = { status: number; json: Record<string, unknown> | undefined };

/**
 * Request headers never passed on: hop-by-hop ones, the length (bodies may be rewritten), compression (answers may be
 * rewritten).
 */
const NOT_FORWARDED = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'accept-encoding',
  'expect',
]);

/**
 * The headers that place a request in a database: DynamoDB Local keeps one per access key and region (unless
 * -sharedDb).
 */
const IDENTITY_HEADERS = ['authorization', 'x-amz-date', 'x-amz-security-token'] as const;

/**
 * DynamoDB Local behind the engine, over a pool of kept-alive connections. `forward` passes a
 * caller's request on; `call` sends one of the engine's own requests (reading an item before a
 * write, a table's schema) with the caller's credentials, so it reaches the caller's database:
 * DynamoDB Local does not verify signatures (checked: a made-up signature is accepted; a request
 * without an Authorization header is refused with a 500).
 */
export class Upstream {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });
  private readonly url: URL;

  constructor(readonly endpoint: string) {
    this.url = new URL(endpoint);
  }

  forward(method: string, path: string, headers: IncomingHttpHeaders, body: Buffer): Promise<UpstreamAnswer> {
    const outgoing: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers))
      if (!NOT_FORWARDED.has(name) && value !== undefined) outgoing[name] = value;
    outgoing['content-length'] = body.length;
    return this.send(method, path, outgoing, body);
  }

  async call(callerHeaders: IncomingHttpHeaders, operation: string, payload: unknown): Promise<JsonAnswer> {
    const headers: OutgoingHttpHeaders = {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `DynamoDB_20120810.${operation}`,
    };
    for (const name of IDENTITY_HEADERS) {
      const value = callerHeaders[name];
      if (value !== undefined) headers[name] = String(value);
    }
    const body = Buffer.from(JSON.stringify(payload));
    headers['content-length'] = body.length;
    const answer = await this.send('POST', '/', headers, body);
    return { status: answer.status, json: parseJson(answer.body) };
  }

  private send(method: string, path: string, headers: OutgoingHttpHeaders, body: Buffer): Promise<UpstreamAnswer> {
    return new Promise((resolve, reject) => {
      const outgoing = request(
        { host: this.url.hostname, port: this.url.port, method, path, headers, agent: this.agent },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('end', () =>
            resolve({ status: incoming.statusCode ?? 502, headers: incoming.headers, body: Buffer.concat(chunks) }),
          );
          incoming.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export function parseJson(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
