import http from 'node:http';

/**
 * A fixed-concurrency load loop (no autocannon: nothing may be installed). `concurrency` workers
 * each run one operation at a time until `count` have run; each operation's wall time is kept.
 * A failed operation is counted and its time dropped; the first failures are kept for the report.
 */
export type LoadResult = { samples: number[]; failures: number; firstFailures: string[]; wallMs: number };

export async function runLoad(count: number, concurrency: number, operation: (index: number) => Promise<unknown>, offset = 0): Promise<LoadResult> {
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
export async function inPool<T>(count: number, concurrency: number, operation: (index: number) => Promise<T>): Promise<T[]> {
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

export type HttpResponse = { status: number; body: string; headers: http.IncomingHttpHeaders };

/** HTTP/1.1 with keep-alive, at most `sockets` connections: what a client with a connection pool does. */
export function httpClient(baseUrl: string, sockets: number) {
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const request = (method: string, path: string, headers: Record<string, string>, body?: string): Promise<HttpResponse> =>
    new Promise((done, fail) => {
      const req = http.request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path: `${base.pathname.replace(/\/$/, '')}${path}`,
          headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => done({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  return { request, close: () => agent.destroy() };
}

export type HttpClient = ReturnType<typeof httpClient>;
