import http from 'node:http';
import { gunzipSync, inflateSync } from 'node:zlib';

/**
 * A fixed-concurrency load loop (no autocannon: nothing may be installed). `concurrency` workers
 * each run one operation at a time until `count` have run; each operation's wall time is kept.
 * A failed operation is counted and its time dropped; the first failures are kept for the report.
 */
export type LoadResult = { samples: number[]; failures: number; firstFailures: string[]; wallMs: number };

export async function runLoad(
  count: number,
  concurrency: number,
  operation: (index: number) => Promise<unknown>,
  offset = 0,
): Promise<LoadResult> {
  const samples: number[] = [];
  const firstFailures: string[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (;;) {
        const index = next;
        next += 1;
        if (index >= count) return;
        const t0 = performance.now();
        try {
          await operation(offset + index);
          samples.push(performance.now() - t0);
        } catch (err) {
          failures += 1;
          if (firstFailures.length < 3) firstFailures.push((err as Error).message.slice(0, 300));
        }
      }
    }),
  );
  return { samples, failures, firstFailures, wallMs: performance.now() - started };
}

/** Runs `count` operations `concurrency` at a time and returns their results in order (seeding). */
export async function inPool<T>(
  count: number,
  concurrency: number,
  operation: (index: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (;;) {
        const index = next;
        next += 1;
        if (index >= count) return;
        results[index] = await operation(index);
      }
    }),
  );
  return results;
}

/**
 * `body`: decoded (a gzip or deflate response is decompressed). `wireBytes`: what crossed the wire
 * as the runtime sent it, status line, headers and (encoded) body; `bodyBytes`: the encoded body.
 */
export type HttpResponse = {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
  wireBytes: number;
  bodyBytes: number;
};

/** The status line and headers as sent: `HTTP/1.1 200 OK\r\n`, one `name: value\r\n` each, and the blank line. */
function headerBytes(res: http.IncomingMessage): number {
  let bytes = Buffer.byteLength(`HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage}\r\n\r\n`);
  for (let i = 0; i < res.rawHeaders.length; i += 2)
    bytes += Buffer.byteLength(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`);
  return bytes;
}

function decoded(body: Buffer, encoding: string | undefined): string {
  if (encoding === 'gzip') return gunzipSync(body).toString('utf8');
  if (encoding === 'deflate') return inflateSync(body).toString('utf8');
  return body.toString('utf8');
}

/**
 * HTTP/1.1 with keep-alive, at most `sockets` connections: what a client with a connection pool does.
 * It sends no Accept-Encoding unless a request's headers do, so responses come plain by default.
 */
export function httpClient(baseUrl: string, sockets: number) {
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const request = (
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<HttpResponse> =>
    new Promise((done, fail) => {
      const req = http.request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path: `${base.pathname.replace(/\/$/, '')}${path}`,
          headers:
            body === undefined
              ? headers
              : { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const raw = Buffer.concat(chunks);
            try {
              const text = decoded(raw, res.headers['content-encoding']);
              done({
                status: res.statusCode ?? 0,
                body: text,
                headers: res.headers,
                wireBytes: headerBytes(res) + raw.length,
                bodyBytes: raw.length,
              });
            } catch (err) {
              fail(err);
            }
          });
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  return { request, close: () => agent.destroy() };
}

export type HttpClient = ReturnType<typeof httpClient>;
