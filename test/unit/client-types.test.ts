import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * The typed client (clients/typescript) ships types generated from the committed OpenAPI document
 * (test/unit/openapi-file.test.ts keeps that document equal to the code). A route or schema change
 * that is not regenerated into the client fails here: run `npm run openapi` and commit the result.
 */
const CLIENT_DIR = resolve(__dirname, '..', '..', 'clients', 'typescript');

function generatorBin(): string {
  const manifest = require.resolve('openapi-typescript/package.json', { paths: [CLIENT_DIR] });
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  return join(dirname(manifest), bin['openapi-typescript']);
}

describe('the typed client', () => {
  it('ships types generated from the committed OpenAPI document', () => {
    // Prepare: the very command of the client's `generate` script, in check mode.
    const generate = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8')).scripts.generate as string;
    const args = generate.split(' ').slice(1);

    // Act
    const run = spawnSync(process.execPath, [generatorBin(), ...args, '--check'], {
      cwd: CLIENT_DIR,
      encoding: 'utf8',
    });

    // Assess
    expect({ status: run.status, output: `${run.stdout}${run.stderr}`.trim() }).toEqual({
      status: 0,
      output: expect.not.stringContaining('not up-to-date'),
    });
  });
});
