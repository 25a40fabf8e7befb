import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { contactFields } from './contact-fields';

export const CreateContactBody = z
  .strictObject(contactFields)
  .register(z.globalRegistry, { id: 'CreateContactRequest' });
