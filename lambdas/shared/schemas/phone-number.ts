import * as z from 'zod/mini';
import './zod-english';
import { E164_PATTERN } from '../phone';

/**
 * A phone number in a request. Here and not in phone.ts, which the authorizer and the domain
 * import for `isE164`: they would otherwise bundle zod for a regular expression.
 */
export const e164 = z.string().check(z.regex(E164_PATTERN, 'must be an E.164 phone number such as +14155550123'));
