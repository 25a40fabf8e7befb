import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { moneyLedgerOf } from '../support/ledger';
import { createTestTable } from '../support/table';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { DomainError } from '../../lambdas/shared/errors';
import { ConsentSupersededError } from '../../lambdas/contexts/consent/errors';
import { readConsentRecord } from '../../lambdas/contexts/consent/history';
import { consentKey } from '../../lambdas/contexts/consent/ledger';
import type { RecordConsentInput } from '../../lambdas/contexts/consent/requests/record-consent';
import { createContact, getContact } from '../../lambdas/contexts/contacts/contacts';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import type { Carrier, OutboundText } from '../../lambdas/contexts/texting/carrier-port';
import { recordConsent } from '../../lambdas/contexts/texting/consent-records';
import { RecipientOptedOutError } from '../../lambdas/contexts/texting/errors';
import { getMessage } from '../../lambdas/contexts/texting/messages';
import { receiveInboundMessage } from '../../lambdas/contexts/texting/receiving';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { deriveEvent } from '../../lambdas/contexts/webhooks/events';
import { consentSet, consentShow } from '../../local/admin/commands/consent';
import type { AdminCommand } from '../../local/admin/registry';
import { UsageError } from '../../local/usage-error';

/**
 * Consent gathered anywhere (POST /consent's domain and the operator's `consent set`/`show`) on
 * DynamoDB Local: an opt-out binds the next send and cancels what is scheduled, an opt-in with
 * evidence reopens sending, each change is a consent.changed carrying its source and a row of the
 * number's bounded history, a change older than the one on record is refused, and an opt-out racing
 * sends to its number leaves no text scheduled for it.
 */
jest.setTimeout(60_000);
beforeAll(createTestTable);

let orgNumbers = 0;
const newOrg = async () =>
  (await createTenant({ name: 'Consent Org', smsNumber: `+1628557${String((orgNumbers += 1)).padStart(4, '0')}` })).id;
let serial = 0;
const freshNumber = () => `+1415777${String((serial += 1)).padStart(4, '0')}`;

function acceptingCarrier(): Carrier & { sent: OutboundText[] } {
  const sent: OutboundText[] = [];
  return {
    name: 'loopback',
    sent,
    send: async (text) => {
      sent.push(text);
      return { messageSid: `SM${randomBytes(16).toString('hex')}` };
    },
  };
}

const evidenceAt = (collectedAt: Date) => ({
  statement: 'I agree to receive appointment reminders by text. Reply STOP to end.',
  where: 'https://example.com/reminders',
  collectedAt: collectedAt.toISOString(),
});
const optOut = (phoneNumber: string): RecordConsentInput => ({ phoneNumber, status: 'opted_out', source: 'email' });
const optIn = (phoneNumber: string, collectedAt = new Date()): RecordConsentInput => ({
  phoneNumber,
  status: 'opted_in',
  source: 'web_form',
  evidence: evidenceAt(collectedAt),
});

const text = (tenantId: string, to: string, sendAt?: Date) =>
  sendMessage(tenantId, { to, body: 'Your table is ready', sendAt: sendAt?.toISOString() }, acceptingCarrier());

/** The ledger row as the stream would show it after a change. */
const ledgerRow = async (tenantId: string, number: string) =>
  (await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: consentKey(tenantId, number) }))).Item;

/** The consent.changed event the router derives from a ledger row's change. */
function consentEventOf(newImage: Record<string, unknown> | undefined, oldImage?: Record<string, unknown>) {
  const derived = deriveEvent({
    eventId: randomBytes(8).toString('hex'),
    eventName: oldImage ? 'MODIFY' : 'INSERT',
    approximateCreationMs: Date.now(),
    newImage,
    oldImage,
  });
  return derived && { type: derived.type, ...(JSON.parse(derived.body) as { data: { consent: unknown } }).data };
}

describe('consent recorded through the API', () => {
  it('opts a number out from the next send (409), reopens it with an opt-in and evidence (201); each change is a consent.changed with its source', async () => {
    // Prepare: a number texted once, held by a contact
    const tenantId = await newOrg();
    const number = freshNumber();
    const { contact } = await createContact(tenantId, { displayName: 'Ada', phoneNumber: number });
    await text(tenantId, number);
    // Act
    const afterOptOut = await recordConsent(tenantId, optOut(number));
    const optedOutRow = await ledgerRow(tenantId, number);
    const refused = await text(tenantId, number).catch((err: unknown) => err);
    // Collected now: an opt-in collected before the opt-out would be history (409 consent_superseded)
    const afterOptIn = await recordConsent(tenantId, optIn(number, new Date()));
    const optedInRow = await ledgerRow(tenantId, number);
    const reopened = await text(tenantId, number);
    // Assess
    expect(afterOptOut).toMatchObject({
      status: 'opted_out',
      source: 'email',
      evidence: null,
      note: 'Opted out by email',
    });
    expect(refused).toBeInstanceOf(RecipientOptedOutError);
    expect(afterOptIn).toMatchObject({ status: 'opted_in', source: 'web_form', note: 'Opted in through a web form' });
    expect(afterOptIn.evidence).toMatchObject({
      statement: expect.stringContaining('reminders'),
      where: expect.any(String),
    });
    expect(afterOptIn.history.map((h) => [h.status, h.source])).toEqual([
      ['opted_in', 'web_form'],
      ['opted_out', 'email'],
    ]);
    expect(reopened.message.status).toMatch(/^(queued|sent)$/);
    expect(consentEventOf(optedOutRow)).toMatchObject({
      type: 'consent.changed',
      consent: { number, status: 'opted_out', source: 'email' },
    });
    expect(consentEventOf(optedInRow, optedOutRow)).toMatchObject({
      type: 'consent.changed',
      consent: { number, status: 'opted_in', source: 'web_form', at: afterOptIn.updatedAt },
    });
    // The contact holding the number shows the change, as after a STOP.
    expect(await getContact(tenantId, contact.id)).toMatchObject({
      consentStatus: 'opted_in',
      consentSource: 'web_form',
    });
  });

  it("cancels the number's scheduled texts at once with reason opted_out and refunds them; another number's stays", async () => {
    // Prepare
    const tenantId = await newOrg();
    const number = freshNumber();
    const other = freshNumber();
    const inTenMinutes = new Date(Date.now() + 10 * 60_000);
    const toNumber = [
      (await text(tenantId, number, inTenMinutes)).message,
      (await text(tenantId, number, inTenMinutes)).message,
    ];
    const toOther = (await text(tenantId, other, inTenMinutes)).message;
    // Act
    await recordConsent(tenantId, optOut(number));
    // Assess
    for (const m of toNumber) {
      expect(await getMessage(tenantId, m.id)).toMatchObject({ status: 'canceled', cancelReason: 'opted_out' });
    }
    expect(await getMessage(tenantId, toOther.id)).toMatchObject({ status: 'scheduled' });
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 1, owedCents: 1 });
  });

  it("refuses a change older than the one on record (the person's later STOP stands) and keeps the same change once", async () => {
    // Prepare: a STOP replied a minute ago
    const tenantId = await newOrg();
    const number = freshNumber();
    await receiveInboundMessage(tenantId, {
      from: number,
      to: '+16285570000',
      body: 'STOP',
      messageSid: `SM${randomBytes(16).toString('hex')}`,
      receivedAt: new Date(Date.now() - 60_000),
    });
    const collectedAt = new Date(Date.now() - 1000);
    // Act
    const stale = await recordConsent(tenantId, optIn(number, new Date(Date.now() - 3_600_000))).catch(
      (e: unknown) => e,
    );
    await recordConsent(tenantId, optIn(number, collectedAt));
    const again = await recordConsent(tenantId, optIn(number, collectedAt));
    // Assess
    expect(stale).toBeInstanceOf(ConsentSupersededError);
    expect((stale as DomainError).details).toMatchObject({ status: 'opted_out' });
    expect(again.history.map((h) => `${h.status}:${h.source}`)).toEqual(['opted_in:web_form', 'opted_out:sms_keyword']);
  });

  it('shows the latest 20 changes of a longer history, newest first', async () => {
    // Prepare
    const tenantId = await newOrg();
    const number = freshNumber();
    const start = Date.now() - 3_600_000;
    // Act: 22 changes, alternating, a second apart
    for (let i = 0; i < 22; i += 1) {
      const at = new Date(start + i * 1000);
      await recordConsent(tenantId, i % 2 === 0 ? { ...optOut(number), evidence: evidenceAt(at) } : optIn(number, at));
    }
    const record = await readConsentRecord(tenantId, number);
    // Assess
    expect(record.history).toHaveLength(20);
    expect(record.history[0].at).toBe(new Date(start + 21_000).toISOString());
    expect(record.history[19].at).toBe(new Date(start + 2000).toISOString());
    expect(record).toMatchObject({ status: 'opted_in', updatedAt: record.history[0].at });
  });
});

describe('an opt-out racing sends to its number', () => {
  /** Resolves once `count` of the promises have settled (at once for 0). */
  const afterSettled = (promises: Promise<unknown>[], count: number) =>
    new Promise<void>((resolve) => {
      let settled = 0;
      if (count === 0) resolve();
      for (const p of promises) void p.finally(() => (settled += 1) === count && resolve());
    });

  it('leaves no text scheduled for it and charges only the texts sent before it, whenever it lands', async () => {
    const tenantId = await newOrg();
    const seen = { canceled: 0, refused: 0 };
    // Round k starts the opt-out once k of the five sends have settled: from before all of them to after all.
    for (let round = 0; round <= 5; round += 1) {
      // Prepare
      const number = freshNumber();
      const later = new Date(Date.now() + 10 * 60_000);
      // Act: three scheduled and two immediate sends, and the opt-out among them
      const sends = [later, undefined, later, undefined, later].map((sendAt) =>
        text(tenantId, number, sendAt).then(
          ({ message }) => message,
          (err: unknown) => {
            if (err instanceof RecipientOptedOutError) return undefined;
            throw err;
          },
        ),
      );
      const optedOut = afterSettled(sends, round).then(() => recordConsent(tenantId, optOut(number)));
      const [, ...outcomes] = await Promise.all([optedOut, ...sends]);
      // Assess: each scheduled text was refused or is canceled (opted_out), never left scheduled
      seen.refused += outcomes.filter((m) => m === undefined).length;
      for (const message of outcomes.filter((m) => m?.sendAt)) {
        expect(await getMessage(tenantId, message!.id)).toMatchObject({
          status: 'canceled',
          cancelReason: 'opted_out',
        });
        seen.canceled += 1;
      }
      await expect(text(tenantId, number)).rejects.toBeInstanceOf(RecipientOptedOutError);
    }
    // Both sides of the race happened: sends refused after the opt-out, scheduled texts canceled by it.
    expect(seen.refused).toBeGreaterThan(0);
    expect(seen.canceled).toBeGreaterThan(0);
    const ledger = await moneyLedgerOf(tenantId);
    expect(ledger.spendCents).toBe(ledger.owedCents);
  });
});

describe('consent set and consent show (the operator CLI)', () => {
  /* eslint-disable-next-line @typescript-eslint/no-explicit-any -- a command of any options, run as the CLI runs it */
  const run = async (command: AdminCommand<any>, positionals: string[], values: Record<string, string>) =>
    command.run(command.parse({ values, positionals }), {
      stateDir: '.local',
      runtime: undefined,
      emit: () => undefined,
      signal: new AbortController().signal,
    }) as Promise<{ consent: Awaited<ReturnType<typeof readConsentRecord>> }>;

  it('records an opt-out and an opt-in with evidence as the API does, and shows them', async () => {
    // Prepare
    const tenantId = await newOrg();
    const number = freshNumber();
    // Act
    await run(consentSet, [tenantId], { phone: number, status: 'opted_out', source: 'call' });
    const refused = await text(tenantId, number).catch((e: unknown) => e);
    // Given after the opt-out (an opt-in collected before it would be refused as superseded).
    const evidence = JSON.stringify(evidenceAt(new Date()));
    await run(consentSet, [tenantId], { phone: number, status: 'opted_in', source: 'in_person', evidence });
    const shown = await run(consentShow, [tenantId], { phone: number });
    // Assess
    expect(refused).toBeInstanceOf(RecipientOptedOutError);
    expect(shown.consent).toMatchObject({ status: 'opted_in', source: 'in_person', evidence: JSON.parse(evidence) });
    expect(shown.consent.history.map((h) => h.source)).toEqual(['in_person', 'call']);
  });

  it('refuses, naming the option, an opt-in without --evidence, evidence that is not JSON, and an unknown source', () => {
    const tenantId = '0192f1a0-5b3c-7d4e-8f60-718293a4b5c6';
    const parse = (values: Record<string, string>) => () => consentSet.parse({ values, positionals: [tenantId] });

    expect(parse({ phone: '+14155550100', status: 'opted_in', source: 'email' })).toThrow(
      new UsageError('--evidence: is required for an opt-in'),
    );
    expect(parse({ phone: '+14155550100', status: 'opted_in', source: 'email', evidence: 'yes' })).toThrow(
      /^--evidence: /,
    );
    expect(parse({ phone: '+14155550100', status: 'opted_out', source: 'sms_keyword' })).toThrow(/^--source: /);
    expect(parse({ phone: '555', status: 'opted_out', source: 'email' })).toThrow(/^--phone: /);
  });
});
