import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import {
  importContacts,
  type ContactImportOptions,
  type ContactImportReport,
  type ImportContact,
} from './contact-import';
import {
  deleteContacts,
  type ContactDeleteOptions,
  type ContactDeleteReport,
  type DeleteContact,
} from './contact-delete';
import type { components, paths } from './schema';

/**
 * A typed client of the service's API v1: openapi-fetch over the types openapi-typescript
 * generates from the OpenAPI document (`src/schema.d.ts`, `npm run openapi` at the repository's
 * root). Every path, parameter, body, response and error is typed from the document, so a call the
 * API does not accept does not compile.
 *
 * @example
 * const api = createClient({ baseUrl: 'http://127.0.0.1:3000/api/v1', apiKey: process.env.CCT_API_KEY! });
 * const { data, error } = await api.GET('/contacts', { params: { query: { search: 'ada' } } });
 */
export type ApiClient = Client<paths> & {
  contacts: {
    /**
     * Imports contacts in batches of 100 (`POST /contacts/batch`), honouring `Retry-After` and the
     * key's rate limit, sending a batch whose answer was lost again with its Idempotency-Key, and
     * answering every contact of the source in order (./contact-import.ts).
     */
    import(
      source: Iterable<ImportContact> | AsyncIterable<ImportContact>,
      options?: ContactImportOptions,
    ): Promise<ContactImportReport>;
    /**
     * Deletes contacts named by `{ id }` or `{ externalId }` in batches of 100 (`POST
     * /contacts/batch/delete`), as `import` sends its batches, answering every contact of the
     * source in order (./contact-delete.ts).
     */
    deleteMany(
      source: Iterable<DeleteContact> | AsyncIterable<DeleteContact>,
      options?: ContactDeleteOptions,
    ): Promise<ContactDeleteReport>;
  };
};

export type ApiClientOptions = Omit<ClientOptions, 'baseUrl'> & {
  /** The base URL with the version prefix: `http://127.0.0.1:3000/api/v1` locally, the stack's `ApiBaseUrl` in AWS. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` on every request. */
  apiKey: string;
};

export function createClient({ apiKey, ...options }: ApiClientOptions): ApiClient {
  const client = createFetchClient<paths>(options);
  client.use({
    onRequest: ({ request }) => {
      request.headers.set('Authorization', `Bearer ${apiKey}`);
      return request;
    },
  });
  return Object.assign(client, {
    contacts: {
      import: (source: Iterable<ImportContact> | AsyncIterable<ImportContact>, importOptions?: ContactImportOptions) =>
        importContacts(client, source, importOptions),
      deleteMany: (
        source: Iterable<DeleteContact> | AsyncIterable<DeleteContact>,
        deleteOptions?: ContactDeleteOptions,
      ) => deleteContacts(client, source, deleteOptions),
    },
  });
}

type Schemas = components['schemas'];
export type ApiError = Schemas['Error'];
export type Me = Schemas['Me'];
export type Call = Schemas['Call'];
export type Contact = Schemas['Contact'];
export type Thread = Schemas['Thread'];
export type Message = Schemas['Message'];
export type DeletedContact = Schemas['DeletedContact'];

export type { components, operations, paths, webhooks } from './schema';
export * from './webhooks';
export * from './batches';
export * from './contact-import';
export * from './contact-delete';
