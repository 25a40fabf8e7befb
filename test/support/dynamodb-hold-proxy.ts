import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseJson, Upstream } from '../../local/dynamodb-limits/upstream';

/**
 * A DynamoDB endpoint for a local runtime (`--dynamodb-endpoint`) that passes every request on to
 * DynamoDB Local and can hold the answer of one GetItem: the read is made when it arrives (it sees
 * the table as it is then), and its answer reaches the runtime only when the test releases it. How
 * an end-to-end test puts an authorizer decision in flight across an operator command.
 */
export type HeldRead = {
  /** Resolves when DynamoDB Local has answered the read and the answer is being held. */
  read: Promise<void>;
  /** Passes the held answer on. */
  release: () => void;
};

export type DynamoDbHoldProxy = {
  url: string;
  /** Holds the answer of the next GetItem of the item with this partition key. */
  holdNextGetItem: (pk: string) => HeldRead;
  stop: () => Promise<void>;
};

const GET_ITEM = 'DynamoDB_20120810.GetItem';

export async function startDynamoDbHoldProxy(dynamodbEndpoint: string): Promise<DynamoDbHoldProxy> {
  const upstream = new Upstream(dynamodbEndpoint);
  const holds = new Map<string, { read: () => void; released: Promise<void> }>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      void (async () => {
        const answer = await upstream.forward(req.method ?? 'POST', req.url ?? '/', req.headers, body);
        const pk =
          req.headers['x-amz-target'] === GET_ITEM
            ? (parseJson(body)?.Key as { pk?: { S?: string } } | undefined)?.pk?.S
            : undefined;
        const hold = pk === undefined ? undefined : holds.get(pk);
        if (pk !== undefined && hold) {
          holds.delete(pk);
          hold.read();
          await hold.released;
        }
        const { 'transfer-encoding': _chunked, connection: _connection, ...headers } = answer.headers;
        res.writeHead(answer.status, { ...headers, 'content-length': answer.body.length }).end(answer.body);
      })().catch((err: Error) => res.writeHead(502).end(err.message));
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holdNextGetItem(pk) {
      let read!: () => void;
      let release!: () => void;
      const held: HeldRead = { read: new Promise((done) => (read = done)), release: () => release() };
      holds.set(pk, { read, released: new Promise((done) => (release = done)) });
      return held;
    },
    stop: () =>
      new Promise<void>((closed) => {
        for (const hold of holds.values()) hold.read();
        server.close(() => closed());
        server.closeAllConnections();
        upstream.close();
      }),
  };
}
