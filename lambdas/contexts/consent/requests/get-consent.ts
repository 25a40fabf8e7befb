import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { e164 } from '../../../shared/schemas/phone-number';

export const GetConsentQuery = z.strictObject({
  phoneNumber: e164.clone().register(z.globalRegistry, { description: 'The number, E.164 (`+` sent as %2B)' }),
});
