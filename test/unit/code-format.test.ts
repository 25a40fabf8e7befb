import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * One layout, enforced: `npm run lint` runs `prettier --check` over the tree (package.json), so a
 * source file Prettier would change fails the suite; and long lines stay rare where people read
 * code (what Prettier cannot wrap: comments and strings).
 */
const REPO_ROOT = resolve(__dirname, '..', '..');
const PRETTIER = join(REPO_ROOT, 'node_modules', 'prettier', 'bin', 'prettier.cjs');
const scripts = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/** What Prettier makes of `source` as the file at `path` (the repository's configuration and ignore file apply). */
const formatted = (path: string, source: string) =>
  execFileSync(process.execPath, [PRETTIER, '--stdin-filepath', path], {
    cwd: REPO_ROOT,
    input: source,
    encoding: 'utf8',
  });

describe('the format check', () => {
  it('is part of npm run lint', () => {
    // Prepare / Act
    const lint = scripts.lint;

    // Assess
    expect(lint).toMatch(/^npm run -s lint:format && /);
    expect(scripts['lint:format']).toMatch(/^prettier --check\b.* \.$/);
  });

  it('leaves a committed source file as it is and rewrites one whose indentation was stripped', () => {
    // Prepare
    const path = 'lambdas/shared/table/optimistic-rounds.ts';
    const source = readFileSync(join(REPO_ROOT, path), 'utf8');
    const stripped = source.replace(/^[ \t]+/gm, '');

    // Act
    const asCommitted = formatted(path, source);
    const afterStripping = formatted(path, stripped);

    // Assess
    expect(stripped).not.toBe(source);
    expect(asCommitted).toBe(source);
    expect(afterStripping).not.toBe(stripped);
    expect(afterStripping).toBe(source);
  });
});

describe('line length where code is read', () => {
  it('keeps at most 50 lines over 120 characters in lambdas/, lib/, local/ and bin/', () => {
    // Prepare
    const files = execFileSync('git', ['ls-files', 'lambdas', 'lib', 'local', 'bin'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((file) => /\.(ts|js|cjs|mjs)$/.test(file));

    // Act
    const long = files.flatMap((file) =>
      readFileSync(join(REPO_ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, index) => (line.length > 120 ? [`${file}:${index + 1}`] : [])),
    );

    // Assess
    expect(files.length).toBeGreaterThan(100);
    expect(long.length).toBeLessThanOrEqual(50);
  });
});
