import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { postPinned } from '../../lambdas/contexts/webhooks/http-post';
import { resolveTarget } from '../../lambdas/contexts/webhooks/internal/ssrf';

/**
 * The sender's HTTP attempt against real servers on loopback addresses: connections are kept
 * alive per checked address, and reused only for an attempt whose check gave that address.
 */

/** One request as the server saw it: which connection (1, 2, ...) and which request on it. */
type Exchange = { connection: number; onConnection: number; localAddress: string | undefined };
type Reply = (req: IncomingMessage, res: ServerResponse, exchange: Exchange) => void;

type Receiver = {
  port: number;
  exchanges: Exchange[];
  connections: () => number;
  closedConnections: () => number;
  reply: Reply;
};

const servers: http.Server[] = [];

/** A server that reads each request to its end, then hands it to `receiver.reply` (204 by default). */
function startReceiver(host = '127.0.0.1', port = 0, counters = { connections: 0, closed: 0 }): Promise<Receiver> {
  const numbers = new WeakMap<Socket, { connection: number; requests: number }>();
  const exchanges: Exchange[] = [];
  const server = http.createServer((req, res) => {
    const socket = req.socket;
    const seen = numbers.get(socket)!;
    seen.requests += 1;
    const exchange = { connection: seen.connection, onConnection: seen.requests, localAddress: socket.localAddress };
    req.resume();
    req.on('end', () => {
      exchanges.push(exchange);
      receiver.reply(req, res, exchange);
    });
  });
  server.on('connection', (socket: Socket) => {
    counters.connections += 1;
    numbers.set(socket, { connection: counters.connections, requests: 0 });
    socket.on('close', () => (counters.closed += 1));
  });
  servers.push(server);
  const receiver: Receiver = {
    port,
    exchanges,
    connections: () => counters.connections,
    closedConnections: () => counters.closed,
    reply: (_req, res) => res.writeHead(204).end(),
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      receiver.port = (server.address() as AddressInfo).port;
      resolve(receiver);
    });
  });
}

const closeServer = (server: http.Server) =>
  new Promise<void>((done) => {
    server.closeAllConnections();
    server.close(() => done());
  });

afterEach(() => Promise.all(servers.splice(0).map(closeServer)));

/** The target as the sender gets it: the host name resolved (here, answered) and checked. */
const checkedTarget = (port: number, address = '127.0.0.1') =>
  resolveTarget(new URL(`http://hooks.example.test:${port}/in`), {
    lookup: async () => [{ address, family: 4 }],
    allowInsecureTargets: true,
  });

const post = async (port: number, options: { address?: string; timeoutMs?: number } = {}) =>
  postPinned(
    await checkedTarget(port, options.address),
    { 'Content-Type': 'application/json' },
    '{"id":"evt"}',
    options.timeoutMs ?? 2000,
  );

async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('IPv6', () => {
  it('posts to a name that resolves to an IPv6 address, over IPv6 to that address', async () => {
    // Prepare
    const receiver = await startReceiver('::1');
    const target = await resolveTarget(new URL(`http://hooks.example.test:${receiver.port}/in`), {
      lookup: async () => [{ address: '::1', family: 6 }],
      allowInsecureTargets: true,
    });

    // Act
    const outcome = await postPinned(target, {}, '{}', 2000);

    // Assess
    expect(outcome).toEqual({ ok: true, status: 204 });
    expect(receiver.exchanges.map((e) => e.localAddress)).toEqual(['::1']);
  });

  it('posts to an IPv6 literal URL', async () => {
    const receiver = await startReceiver('::1');
    const target = await resolveTarget(new URL(`http://[::1]:${receiver.port}/in`), { allowInsecureTargets: true });

    const outcome = await postPinned(target, {}, '{}', 2000);

    expect(outcome).toEqual({ ok: true, status: 204 });
    expect(target).toMatchObject({ address: '::1', family: 6 });
  });
});

describe('connection reuse', () => {
  it('sends two consecutive successful attempts to the same target over one connection', async () => {
    // Prepare
    const receiver = await startReceiver();

    // Act
    const outcomes = [await post(receiver.port), await post(receiver.port)];

    // Assess
    expect(outcomes).toEqual([
      { ok: true, status: 204 },
      { ok: true, status: 204 },
    ]);
    expect(receiver.connections()).toBe(1);
    expect(receiver.exchanges.map((e) => [e.connection, e.onConnection])).toEqual([
      [1, 1],
      [1, 2],
    ]);
  });

  it('reads a 2xx body to its end, so its connection is reused too', async () => {
    const receiver = await startReceiver();
    receiver.reply = (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok '.repeat(5000));

    const outcomes = [await post(receiver.port), await post(receiver.port)];

    expect(outcomes).toEqual([
      { ok: true, status: 200 },
      { ok: true, status: 200 },
    ]);
    expect(receiver.connections()).toBe(1);
  });

  it('never reuses a socket of another checked address for the same host name', async () => {
    // Prepare: one port on 127.0.0.1 and on 127.0.0.2, as one name whose DNS answer changes.
    const counters = { connections: 0, closed: 0 };
    const first = await startReceiver('127.0.0.1', 0, counters);
    const second = await startReceiver('127.0.0.2', first.port, counters);

    // Act
    const outcomes = [
      await post(first.port, { address: '127.0.0.1' }),
      await post(first.port, { address: '127.0.0.2' }),
      await post(first.port, { address: '127.0.0.1' }),
    ];

    // Assess: each request arrived at the address checked for it; the third reused the first's socket.
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(first.exchanges).toEqual([
      { connection: 1, onConnection: 1, localAddress: '127.0.0.1' },
      { connection: 1, onConnection: 2, localAddress: '127.0.0.1' },
    ]);
    expect(second.exchanges).toEqual([{ connection: 2, onConnection: 1, localAddress: '127.0.0.2' }]);
    expect(counters.connections).toBe(2);
  });
});

describe('a receiver that closes kept-alive connections', () => {
  it('closing each connection right after its response: every attempt still succeeds', async () => {
    const receiver = await startReceiver();
    receiver.reply = (req, res) => {
      const socket = req.socket;
      res.on('finish', () => socket.destroy());
      res.writeHead(204).end();
    };

    const outcomes = [await post(receiver.port), await post(receiver.port)];
    await pause(50);
    outcomes.push(await post(receiver.port));

    expect(outcomes).toEqual(Array(3).fill({ ok: true, status: 204 }));
    expect(receiver.exchanges.map((e) => e.onConnection)).toEqual([1, 1, 1]);
  });

  it('resetting a reused connection as the attempt is sent: retried once, on a new connection', async () => {
    // Prepare: a receiver that drops any second request on a connection without answering,
    // as one whose idle timeout fires just as the request arrives.
    const receiver = await startReceiver();
    receiver.reply = (req, res, exchange) => {
      if (exchange.onConnection > 1) req.socket.destroy();
      else res.writeHead(204).end();
    };
    await post(receiver.port);

    // Act
    const outcome = await post(receiver.port);

    // Assess
    expect(outcome).toEqual({ ok: true, status: 204 });
    expect(receiver.exchanges.map((e) => [e.connection, e.onConnection])).toEqual([
      [1, 1],
      [1, 2], // reset
      [2, 1], // the retry
    ]);
  });

  it('a reset on the retry too is a failed attempt, not another retry', async () => {
    const receiver = await startReceiver();
    await post(receiver.port);
    receiver.reply = (req) => req.socket.destroy();

    const outcome = await post(receiver.port);

    expect(outcome).toEqual({ ok: false, error: 'network error: ECONNRESET' });
    expect(receiver.exchanges.map((e) => [e.connection, e.onConnection])).toEqual([
      [1, 1],
      [1, 2],
      [2, 1],
    ]);
  });

  it('a reset on a new connection is a failed attempt: only a reused socket is retried', async () => {
    const receiver = await startReceiver();
    receiver.reply = (req) => req.socket.destroy();

    const outcome = await post(receiver.port);

    expect(outcome).toEqual({ ok: false, error: 'network error: ECONNRESET' });
    expect(receiver.exchanges).toHaveLength(1);
  });
});

describe('failed attempts leave no socket to reuse', () => {
  it('a timed-out attempt gives the timeout outcome and its connection is closed', async () => {
    // Prepare: the first request is never answered.
    const receiver = await startReceiver();
    receiver.reply = (_req, res, exchange) => {
      if (exchange.connection > 1) res.writeHead(201).end();
    };

    // Act
    const timedOut = await post(receiver.port, { timeoutMs: 200 });
    await until(() => receiver.closedConnections() === 1);
    const next = await post(receiver.port);

    // Assess
    expect(timedOut).toEqual({ ok: false, error: 'timeout: no response within 200 ms' });
    expect(next).toEqual({ ok: true, status: 201 });
    expect(receiver.exchanges.map((e) => [e.connection, e.onConnection])).toEqual([
      [1, 1],
      [2, 1],
    ]);
  });

  it('a failing response is read up to the excerpt limit, then its connection is closed', async () => {
    const receiver = await startReceiver();
    receiver.reply = (_req, res, exchange) => {
      if (exchange.connection === 1) res.writeHead(500, { 'Content-Type': 'text/plain' }).end('x'.repeat(100_000));
      else res.writeHead(201).end();
    };

    const failed = await post(receiver.port);
    await until(() => receiver.closedConnections() === 1);
    const next = await post(receiver.port);

    expect(failed).toEqual({ ok: false, status: 500, error: `HTTP 500: ${'x'.repeat(190)}` });
    expect(next).toEqual({ ok: true, status: 201 });
    expect(receiver.exchanges.map((e) => e.connection)).toEqual([1, 2]);
  });

  it('a complete failing response still closes its connection', async () => {
    const receiver = await startReceiver();
    receiver.reply = (_req, res, exchange) => {
      if (exchange.connection === 1) res.writeHead(503, { 'Content-Type': 'text/plain' }).end('busy\n');
      else res.writeHead(201).end();
    };

    const failed = await post(receiver.port);
    await until(() => receiver.closedConnections() === 1);
    const next = await post(receiver.port);

    expect(failed).toEqual({ ok: false, status: 503, error: 'HTTP 503: busy' });
    expect(next).toEqual({ ok: true, status: 201 });
    expect(receiver.exchanges.map((e) => e.connection)).toEqual([1, 2]);
  });

  it('a success whose body never ends is closed at the attempt deadline, not reused', async () => {
    const receiver = await startReceiver();
    receiver.reply = (_req, res, exchange) => {
      if (exchange.connection === 1) res.writeHead(200, { 'Content-Type': 'text/plain' }).write('streaming');
      else res.writeHead(204).end();
    };

    const outcome = await post(receiver.port, { timeoutMs: 200 });
    await until(() => receiver.closedConnections() === 1);
    const next = await post(receiver.port);

    expect(outcome).toEqual({ ok: true, status: 200 });
    expect(next).toEqual({ ok: true, status: 204 });
    expect(receiver.exchanges.map((e) => e.connection)).toEqual([1, 2]);
  });
});

describe('the idle timeout of pooled sockets', () => {
  it('does not cut an attempt whose receiver answers after it, within the attempt deadline', async () => {
    const receiver = await startReceiver();
    receiver.reply = (_req, res) => void setTimeout(() => res.writeHead(204).end(), 4_500);

    const outcome = await post(receiver.port, { timeoutMs: 8_000 });

    expect(outcome).toEqual({ ok: true, status: 204 });
  }, 10_000);
});
