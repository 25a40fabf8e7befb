import { startLocalRuntime, type LocalRuntimeHandle, type LocalRuntimeOptions } from '../../support/local-runtime';
import { createOpenApiValidator, type OpenApiDocument } from '../../../local/openapi-validator';
import { uuidv7 } from '../../../lambdas/shared/ids';
import { createApi, type Api } from './api';

/** A well-formed id that names no row: a fresh UUIDv7. */
export const unknownId = (): string => uuidv7();

/** What an end-to-end test file shares: one runtime and a client checked against its OpenAPI document. */
export type E2e = {
  runtime: LocalRuntimeHandle;
  api: Api;
  /** The demo organization's id, from runtime.json. */
  demoTenantId: string;
};

/** Admin commands that run as processes spawn Node with tsx; a few in a row take seconds. */
export const E2E_TEST_TIMEOUT_MS = 30_000;
const START_TIMEOUT_MS = 200_000;

/** A client for this runtime that checks every response against the OpenAPI document the runtime serves. */
export async function connect(runtime: LocalRuntimeHandle): Promise<Api> {
  const document = (await (await fetch(`${runtime.baseUrl}/openapi.json`)).json()) as OpenApiDocument;
  return createApi(runtime.baseUrl, createOpenApiValidator(document));
}

/**
 * Starts one runtime for the calling test file (beforeAll) and stops it afterwards. The returned
 * object is filled in before the first test runs. Options given as a function are asked for then,
 * after the file's earlier beforeAll hooks (a test double the runtime is pointed at).
 */
export function useLocalRuntime(options?: LocalRuntimeOptions | (() => LocalRuntimeOptions)): E2e {
  jest.setTimeout(E2E_TEST_TIMEOUT_MS);
  const e2e = {} as E2e;
  beforeAll(async () => {
    e2e.runtime = await startLocalRuntime(typeof options === 'function' ? options() : options);
    e2e.api = await connect(e2e.runtime);
    e2e.demoTenantId = e2e.runtime.info.demoTenantId!;
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await e2e.runtime?.stop();
  }, START_TIMEOUT_MS);
  return e2e;
}
