import { randomUUID } from 'node:crypto';

// Runs before each integration test file imports anything: the shared module reads TABLE_NAME at
// load time, so every file gets its own fresh table on the one DynamoDB Local.
process.env.TABLE_NAME = `it-${randomUUID()}`;
