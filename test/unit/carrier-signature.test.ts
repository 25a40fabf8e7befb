import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { computeTwilioSignature, verifyTwilioSignature, type FormPair } from '../../lambdas/contexts/carrier/signature';

/**
 * Expected values are not produced by the code under test: the two documentation vectors were
 * computed with openssl (`printf '%s' "<url><name><value>..." | openssl dgst -sha1 -hmac 12345
 * -binary | base64`), and `independently` below is a second, literal implementation of the
 * algorithm as Twilio's security page states it.
 */
const DOCS_URL = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const DOCS_TOKEN = '12345';
const docsParams = (caller: string): Record<string, string> => ({
  CallSid: 'CA1234567890ABCDE',
  Caller: caller,
  Digits: '1234',
  From: caller,
  To: '+18005551212',
});

function independently(url: string, form: string, authToken: string): string {
  const fields = form
    .split('&')
    .map((pair) => pair.split('=').map((part) => decodeURIComponent(part.replace(/\+/g, ' '))));
  const names = fields.map(([name]) => name).sort();
  let data = url;
  for (const name of names) data += name + fields.find(([n]) => n === name)![1];
  return createHmac('sha1', Buffer.from(authToken, 'utf8')).update(Buffer.from(data, 'utf8')).digest('base64');
}

const recordedSmsBody = readFileSync(join(__dirname, '../fixtures/twilio/sms-inbound.form'), 'utf8').trim();
const smsUrl = 'https://api.example.com/prod/carrier/twilio/sms/inbound';
const pairsOf = (form: string): FormPair[] => [...new URLSearchParams(form)];

describe('X-Twilio-Signature', () => {
  it.each([
    ['+14158675310', 'GvWf1cFY/Q7PnoempGyD5oXAezc='],
    ['+12349013030', '0/KCTR6DLpKmkAf8muzZqo1nDgQ='],
  ])("matches Twilio's documented example with caller %s", (caller, expected) => {
    // Act
    const signature = computeTwilioSignature(DOCS_URL, docsParams(caller), DOCS_TOKEN);
    // Assess
    expect(signature).toBe(expected);
    expect(
      verifyTwilioSignature({ url: DOCS_URL, params: docsParams(caller), signature: expected, authToken: DOCS_TOKEN }),
    ).toBe(true);
  });

  it('matches an independent computation over a recorded inbound-text body', () => {
    // Prepare
    const expected = independently(smsUrl, recordedSmsBody, 'tok_9c1e');
    // Act
    const valid = verifyTwilioSignature({
      url: smsUrl,
      params: pairsOf(recordedSmsBody),
      signature: expected,
      authToken: 'tok_9c1e',
    });
    // Assess
    expect(computeTwilioSignature(smsUrl, pairsOf(recordedSmsBody), 'tok_9c1e')).toBe(expected);
    expect(valid).toBe(true);
  });

  it('still verifies when the body arrives in another order: the parameters are sorted', () => {
    // Prepare
    const signature = independently(smsUrl, recordedSmsBody, 'tok_9c1e');
    const reordered = recordedSmsBody.split('&').reverse().join('&');
    // Act
    const valid = verifyTwilioSignature({ url: smsUrl, params: pairsOf(reordered), signature, authToken: 'tok_9c1e' });
    // Assess
    expect(valid).toBe(true);
  });

  it.each([
    ['another host', 'https://attacker.example.com/prod/carrier/twilio/sms/inbound'],
    ['http instead of https', 'http://api.example.com/prod/carrier/twilio/sms/inbound'],
    ['another path', 'https://api.example.com/prod/carrier/twilio/sms/status'],
    ['a query string added', `${smsUrl}?tenantId=0199a000-0000-7000-8000-000000000001`],
  ])('refuses a signature made for %s', (_case, url) => {
    // Prepare
    const signature = independently(url, recordedSmsBody, 'tok_9c1e');
    // Act
    const valid = verifyTwilioSignature({
      url: smsUrl,
      params: pairsOf(recordedSmsBody),
      signature,
      authToken: 'tok_9c1e',
    });
    // Assess
    expect(valid).toBe(false);
  });

  it('refuses a changed value, another token, a truncated signature and a missing one', () => {
    // Prepare
    const signature = independently(smsUrl, recordedSmsBody, 'tok_9c1e');
    const tampered = recordedSmsBody.replace('Body=Running', 'Body=STOP+Running');
    const verify = (form: string, sig: string | undefined, token = 'tok_9c1e') =>
      verifyTwilioSignature({ url: smsUrl, params: pairsOf(form), signature: sig, authToken: token });
    // Act + Assess
    expect(verify(tampered, signature)).toBe(false);
    expect(verify(recordedSmsBody, signature, 'another-token')).toBe(false);
    expect(verify(recordedSmsBody, signature.slice(0, -1))).toBe(false);
    expect(verify(recordedSmsBody, undefined)).toBe(false);
    expect(verify(recordedSmsBody, '')).toBe(false);
  });

  it('sorts a repeated parameter name by value, whatever order the values came in', () => {
    // Prepare: "Digits" twice; Twilio's rule sorts the pairs, so a-then-b is the signed order.
    const data = `${smsUrl}Digits1Digits2From+14155550100`;
    const expected = createHmac('sha1', 'tok').update(data).digest('base64');
    // Act
    const signature = computeTwilioSignature(
      smsUrl,
      [
        ['From', '+14155550100'],
        ['Digits', '2'],
        ['Digits', '1'],
      ],
      'tok',
    );
    // Assess
    expect(signature).toBe(expected);
  });
});
