import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The README and docs/ are what a user who clones the repository has: every relative link in them
 * must lead to a file of the repository (never to a sibling folder the clone does not have), and no
 * page may send the reader to `../shared/`.
 */
const REPO_ROOT = resolve(__dirname, '..', '..');
const PAGES = [
  'README.md',
  'bench/README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** `[text](target)` links that are not web addresses or in-page anchors, with their line. */
function relativeLinks(page: string): { target: string; line: number }[] {
  return readFileSync(join(REPO_ROOT, page), 'utf8')
    .split('\n')
    .flatMap((text, index) =>
      [...text.matchAll(/\]\(([^)\s]+)\)/g)]
        .map((match) => match[1].split('#')[0])
        .filter((target) => target !== '' && !/^[a-z]+:/i.test(target))
        .map((target) => ({ target, line: index + 1 })),
    );
}

describe('README and docs/ stand alone', () => {
  it.each(PAGES)('%s links only to files inside the repository', (page) => {
    const broken = relativeLinks(page)
      .map(({ target, line }) => ({ line, target, path: relative(REPO_ROOT, resolve(REPO_ROOT, dirname(page), target)) }))
      .filter(({ path }) => path.startsWith('..') || !existsSync(join(REPO_ROOT, path)))
      .map(({ line, target }) => `${page}:${line}: ${target}`);
    expect(broken).toEqual([]);
  });

  it.each(PAGES)('%s names no file outside the repository (../shared/)', (page) => {
    expect(readFileSync(join(REPO_ROOT, page), 'utf8')).not.toContain('../shared/');
  });
});
