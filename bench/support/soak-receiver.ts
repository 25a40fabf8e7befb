import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';
import { seededRandom } from '../../test/support/seeded-random';

/**
 * The soak's webhook receivers: one server, a path per organization, each verifying every
 * signature with its endpoint's secret as an integrator does, and answering 500 to a share of the
 * attempts (chosen by a seeded generator, so a run can be repeated). Every attempt is kept: which
 * event, about which resource, when it came, how it was answered.
 */
export type Attempt = {
  eventId: string;
  type: string;
  /** The resource the event is about: the message or call id. */
  resourceId: string;
  /** The event's `createdAt`, epoch ms: the moment of the change. */
  changedAtMs: number;
  atMs: number;
  signatureOk: boolean;
  answered: number;
};

export type SoakReceiver = {
  url: (path: string) => string;
  secrets: Map<string, string>;
  /** Attempts by path. */
  attempts: Map<string, Attempt[]>;
  unparsable: () => number;
  close: () => Promise<void>;
};

type EventBody = {
  id: string;
  type: string;
  createdAt: string;
  data: { messageId?: string; message?: { id: string }; call?: { id: string } };
};

const resourceOf = (event: EventBody): string =>
  event.data.messageId ?? event.data.message?.id ?? event.data.call?.id ?? '?';

export async function startSoakReceiver(failShare: number, seed: number): Promise<SoakReceiver> {
  const secrets = new Map<string, string>();
  const attempts = new Map<string, Attempt[]>();
  const random = seededRandom(seed);
  let unparsable = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = req.url ?? '';
      const signatureOk = verifyDelivery(req.headers, raw, secrets.get(path) ?? '').ok;
      let event: EventBody;
      try {
        event = JSON.parse(raw.toString('utf8')) as EventBody;
      } catch {
        unparsable += 1;
        res.writeHead(400).end();
        return;
      }
      const answered = !signatureOk ? 401 : random() < failShare ? 500 : 204;
      const list = attempts.get(path) ?? [];
      list.push({
        eventId: event.id,
        type: event.type,
        resourceId: resourceOf(event),
        changedAtMs: Date.parse(event.createdAt),
        atMs: Date.now(),
        signatureOk,
        answered,
      });
      attempts.set(path, list);
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    secrets,
    attempts,
    unparsable: () => unparsable,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
