import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { computeTwilioSignature } from '../../lambdas/contexts/carrier/signature';
import { isRetried, requestedUrlOf, retryPolicyOf, type AttemptFailure } from './twilio-connection-overrides';

/**
 * A fake Twilio over real HTTP: the Messages API (`POST /2010-04-01/Accounts/{sid}/Messages.json`,
 * form-encoded, Basic auth) with injected faults, and the signed status callbacks Twilio sends to
 * each text's StatusCallback URL, early, late, twice and out of order, retried on failure as the
 * connection overrides ask. It remembers every request and every text it created, so a test can
 * compare what the carrier did with what the service recorded.
 */
export type SendFault =
  /** Created, answered 201 with the sid. */
  | 'ok'
  /** Created, answered after the client gave up. */
  | 'late'
  /** Created, the connection reset before an answer. */
  | 'reset'
  /** Created, then answered 500 (Twilio's own failure after accepting). */
  | 'created_500'
  /** Not created, answered 503. */
  | 'not_created_503'
  /** Not created, answered 429. */
  | 'throttled_429';

export type CarrierRequest = {
  to: string;
  body: string;
  statusCallback: string;
  fault: SendFault | 'invalid_number' | 'opted_out';
  created: boolean;
};

export type CreatedText = {
  sid: string;
  from: string;
  to: string;
  body: string;
  /** What Twilio would end with: delivered, or undelivered (a carrier failure). */
  finalStatus: 'delivered' | 'undelivered';
};

export type FakeTwilioOptions = {
  authToken: string;
  /** Deterministic chaos: a seeded generator in [0, 1). */
  random: () => number;
  /** Weights of each fault (ok gets the rest). */
  faults: Partial<Record<Exclude<SendFault, 'ok'>, number>>;
  /** How long a `late` answer waits: longer than the client's timeout. */
  lateMs: number;
  /** Recipients refused with 21211 (invalid number) and 21610 (the carrier's own opt-out list). */
  invalidNumbers: ReadonlySet<string>;
  optedOutNumbers: ReadonlySet<string>;
  /** Share of callbacks sent twice, sent in reverse order, and sent before the send is answered. */
  duplicateShare: number;
  reorderShare: number;
  earlyShare: number;
  /** Share of created texts that end undelivered. */
  undeliveredShare: number;
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class FakeTwilio {
  readonly requests: CarrierRequest[] = [];
  readonly created: CreatedText[] = [];
  readonly callbackAttempts = { sent: 0, failed: 0, duplicates: 0, reordered: 0, early: 0 };
  readonly #options: FakeTwilioOptions;
  readonly #server: Server;
  readonly #inFlight = new Set<Promise<void>>();

  constructor(options: FakeTwilioOptions) {
    this.#options = options;
    this.#server = createServer((req, res) => void this.#handle(req, res));
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Waits until every scheduled callback was delivered or gave up. */
  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  async stop(): Promise<void> {
    await this.drain();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #pick(): SendFault {
    let roll = this.#options.random();
    for (const [fault, weight] of Object.entries(this.#options.faults) as [SendFault, number][]) {
      if (roll < weight) return fault;
      roll -= weight;
    }
    return 'ok';
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const to = form.get('To') ?? '';
    const from = form.get('From') ?? '';
    const body = form.get('Body') ?? '';
    const statusCallback = form.get('StatusCallback') ?? '';
    const json = (status: number, payload: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (this.#options.invalidNumbers.has(to)) {
      this.requests.push({ to, body, statusCallback, fault: 'invalid_number', created: false });
      return json(400, { code: 21211, message: "The 'To' number is not a valid phone number.", status: 400 });
    }
    if (this.#options.optedOutNumbers.has(to)) {
      this.requests.push({ to, body, statusCallback, fault: 'opted_out', created: false });
      return json(400, { code: 21610, message: 'Attempt to send to unsubscribed recipient', status: 400 });
    }
    const fault = this.#pick();
    const created = !['not_created_503', 'throttled_429'].includes(fault);
    this.requests.push({ to, body, statusCallback, fault, created });
    if (fault === 'throttled_429') return json(429, { code: 20429, message: 'Too Many Requests', status: 429 });
    if (fault === 'not_created_503') return json(503, { code: 20500, message: 'Service Unavailable', status: 503 });

    const text: CreatedText = {
      sid: `SM${randomBytes(16).toString('hex')}`,
      from,
      to,
      body,
      finalStatus: this.#options.random() < this.#options.undeliveredShare ? 'undelivered' : 'delivered',
    };
    this.created.push(text);
    const early = this.#options.random() < this.#options.earlyShare;
    if (early) {
      // The callbacks race the answer: they are on their way before it is written.
      this.callbackAttempts.early += 1;
      await this.#track(this.#playCallbacks(text, statusCallback));
    } else {
      this.#track(pause(this.#options.random() * 40).then(() => this.#playCallbacks(text, statusCallback)));
    }
    if (fault === 'reset') return void req.socket.destroy();
    if (fault === 'late') await pause(this.#options.lateMs);
    if (fault === 'created_500') return json(500, { code: 20500, message: 'Internal Server Error', status: 500 });
    return json(201, { sid: text.sid, status: 'queued', to, body: '', error_code: null });
  }

  #track(work: Promise<void>): Promise<void> {
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work));
    return work;
  }

  /** sent, then the final status; maybe reversed, each maybe twice. */
  async #playCallbacks(text: CreatedText, url: string): Promise<void> {
    if (!url) return;
    const statuses: string[] = ['sent', text.finalStatus];
    if (this.#options.random() < this.#options.reorderShare) {
      statuses.reverse();
      this.callbackAttempts.reordered += 1;
    }
    for (const status of statuses) {
      const copies = this.#options.random() < this.#options.duplicateShare ? 2 : 1;
      if (copies === 2) this.callbackAttempts.duplicates += 1;
      for (let copy = 0; copy < copies; copy += 1) await this.#post(url, text, status);
    }
  }

  /** One callback as Twilio posts it, retried as the URL's connection overrides ask (none: Twilio's default). */
  async #post(url: string, text: CreatedText, status: string): Promise<void> {
    const form: Record<string, string> = {
      AccountSid: 'ACfake',
      ApiVersion: '2010-04-01',
      MessageSid: text.sid,
      SmsSid: text.sid,
      MessageStatus: status,
      SmsStatus: status,
      To: text.to,
      From: text.from,
      ...(status === 'undelivered' && { ErrorCode: '30003' }),
    };
    const signed = requestedUrlOf(url);
    const policy = retryPolicyOf(url);
    for (let attempt = 0; attempt <= policy.retries; attempt += 1) {
      this.callbackAttempts.sent += 1;
      let failure: AttemptFailure;
      try {
        const response = await fetch(signed, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/x-www-form-urlencoded',
            'X-Twilio-Signature': computeTwilioSignature(signed, form, this.#options.authToken),
          },
          body: new URLSearchParams(form).toString(),
        });
        await response.arrayBuffer();
        if (response.ok) return;
        failure = { kind: 'status', status: response.status };
      } catch {
        failure = { kind: 'connect' }; // a reset before any answer
      }
      this.callbackAttempts.failed += 1;
      if (!isRetried(policy, failure)) return;
      await pause(10 + attempt * 10);
    }
  }
}
