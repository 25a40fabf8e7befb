import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver an integrator would run: node:http on 127.0.0.1, recording every request
 * with its raw body. Each path answers from its own script (one reply per request, in order, then
 * its default), so a test can make an endpoint fail, hang, redirect, say it is gone (410) and recover.
 */
export type Reply = 'ok' | 'fail' | 'hang' | 'redirect' | 'gone';

export type Received = { path: string; headers: IncomingHttpHeaders; body: string; reply: Reply };

export type Receiver = {
  /** `http://127.0.0.1:<port><path>`. */
  url: (path: string) => string;
  /** Replies for the next requests to `path` (in order), then `then` for every later one. */
  script: (path: string, replies: Reply[], then?: Reply) => void;
  /** Every request so far, oldest first. */
  received: () => Received[];
  close: () => Promise<void>;
};

const STATUS: Record<Exclude<Reply, 'hang'>, number> = { ok: 204, fail: 500, redirect: 302, gone: 410 };

export async function startReceiver(): Promise<Receiver> {
  const scripts = new Map<string, { replies: Reply[]; then: Reply }>();
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const script = scripts.get(path);
      const reply = script?.replies.shift() ?? script?.then ?? 'ok';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), reply });
      if (reply === 'hang') return; // no answer at all: the sender's attempt timeout decides
      if (reply === 'redirect') res.setHeader('Location', `${path}-moved`);
      res.writeHead(STATUS[reply]).end(reply === 'fail' ? 'receiver says no' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    script: (path, replies, then = 'ok') => scripts.set(path, { replies: [...replies], then }),
    received: () => [...received],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections(); // hung requests included
        server.close(() => resolve());
      }),
  };
}
