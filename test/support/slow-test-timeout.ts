/**
 * The integration and end-to-end projects' bound on a test or hook: a minute, not Jest's 5 s.
 * They wait on DynamoDB Local, the limits engine, runtimes and HTTP, and on two busy cores a hook
 * that creates a table and seeds it can take longer than 5 s: a suite that fails under load is not
 * deterministic. The bound is there to catch a hang; speed is measured in the bench, never here.
 * A test that sets its own (`jest.setTimeout`, a third argument) keeps it.
 */
jest.setTimeout(60_000);
