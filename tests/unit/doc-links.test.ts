import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

// Every relative link in the README and docs/ points at a file that exists, and its #anchor at one of
// that file's headings: the README lists the decisions a line each, linking into docs/decisions.md.
const ROOT = join(__dirname, '../..');
const FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's heading anchor (github-slugger): lowercased, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,6} (.+)$/.exec(line);
    if (!m) continue;
    const base = m[1].trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

function linksOf(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l));
}

describe('links between the README and docs/', () => {
  it('the slugger numbers repeated headings and drops punctuation as GitHub does', () => {
    expect([...anchorsOf("# A\n## `POST /v1/m`\n## Compose's \"see it\"\n## A\n```\n# not a heading\n```")]).toEqual(['a', 'post-v1m', 'composes-see-it', 'a-1']);
  });

  for (const file of FILES) {
    it(`${file}: every relative link and anchor resolves`, () => {
      const broken: string[] = [];
      for (const link of linksOf(readFileSync(join(ROOT, file), 'utf8'))) {
        const [path, anchor] = link.split('#');
        const target = path ? join(ROOT, dirname(file), decodeURIComponent(path)) : join(ROOT, file);
        if (!existsSync(target)) broken.push(`${link}: no file ${relative(ROOT, target)}`);
        else if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${link}: no heading #${anchor}`);
      }
      expect(broken).toEqual([]);
    });
  }
});
