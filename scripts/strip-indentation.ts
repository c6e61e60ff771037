import { transform } from 'esbuild';

// Words after which a `/` starts a regular expression, not a division.
const BEFORE_AN_EXPRESSION = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);

/** Stripping the indentation would have changed what the program means: the bundle is refused. */
export class IndentationNotStrippable extends Error {
  constructor(detail: string) {
    super(`the bundle's indentation cannot be stripped safely (${detail}); build without stripIndentation in scripts/build-host.ts, or make the scanner in scripts/strip-indentation.ts read this construct`);
    this.name = 'IndentationNotStrippable';
  }
}

/**
 * `source` (esbuild's output) with the spaces and tabs that begin each line removed, except
 * inside template literals, whose text they are part of. V8 keeps a script's whole source for as
 * long as the process runs, and the host bundle is about a sixth indentation (some 0.2 MB of
 * the idle host). Every line stays where it was, so a stack trace still names the line.
 *
 * A small scanner tells code from strings, comments, regular expressions and template text.
 * Throws IndentationNotStrippable for a construct it cannot read; {@link withoutIndentation}
 * also checks the result means the same program.
 */
export function stripIndentation(source: string): string {
  const parts: string[] = [];
  const n = source.length;
  // One entry per template literal or `${` being read: the braces open within it (-1 for the
  // template's own text).
  const nesting: number[] = [0];
  let inTemplate = false;
  let afterValue = false;
  let lastWord = '';
  let lineStart = true;
  let i = 0;
  const take = (end: number): void => {
    parts.push(source.slice(i, end));
    i = end;
  };
  while (i < n) {
    const c = source[i] as string;
    if (inTemplate) {
      if (c === '\\') take(i + 2);
      else if (c === '`') {
        take(i + 1);
        inTemplate = false;
        nesting.pop();
        afterValue = true;
      } else if (c === '$' && source[i + 1] === '{') {
        take(i + 2);
        inTemplate = false;
        nesting.push(0);
        afterValue = false;
      } else take(i + 1);
      continue;
    }
    if (lineStart && (c === ' ' || c === '\t')) {
      i += 1;
      continue;
    }
    lineStart = false;
    if (c === '\n') {
      take(i + 1);
      lineStart = true;
    } else if (c === ' ' || c === '\t' || c === '\r') {
      take(i + 1);
    } else if (c === '/' && source[i + 1] === '/') {
      const end = source.indexOf('\n', i);
      take(end < 0 ? n : end);
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      if (end < 0) throw new IndentationNotStrippable(`a comment that does not end, at offset ${i}`);
      parts.push(source.slice(i, end + 2).replace(/\n[ \t]+/g, '\n'));
      i = end + 2;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < n && source[j] !== c) {
        if (source[j] === '\\') j += 1;
        else if (source[j] === '\n') throw new IndentationNotStrippable(`a line break in a string, at offset ${j}`);
        j += 1;
      }
      take(j + 1);
      afterValue = true;
    } else if (c === '`') {
      take(i + 1);
      nesting.push(-1);
      inTemplate = true;
    } else if (c === '/' && (!afterValue || BEFORE_AN_EXPRESSION.has(lastWord))) {
      let j = i + 1;
      let inClass = false;
      while (j < n && (inClass || source[j] !== '/')) {
        if (source[j] === '\\') j += 1;
        else if (source[j] === '\n') throw new IndentationNotStrippable(`a line break in what reads as a regular expression, at offset ${i}`);
        else if (source[j] === '[') inClass = true;
        else if (source[j] === ']') inClass = false;
        j += 1;
      }
      j += 1;
      while (j < n && /[a-z]/i.test(source[j] as string)) j += 1;
      take(j);
      afterValue = true;
      lastWord = '';
    } else if (c === '{') {
      nesting[nesting.length - 1] = (nesting.at(-1) as number) + 1;
      take(i + 1);
      afterValue = false;
      lastWord = '';
    } else if (c === '}') {
      const depth = nesting.at(-1) as number;
      take(i + 1);
      if (depth === 0 && nesting.length > 1) {
        // The end of a `${ … }`: back to the template's text.
        nesting.pop();
        inTemplate = true;
      } else {
        nesting[nesting.length - 1] = depth - 1;
        afterValue = true;
        lastWord = '';
      }
    } else if (/[A-Za-z0-9_$]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$]/.test(source[j] as string)) j += 1;
      lastWord = source.slice(i, j);
      take(j);
      afterValue = true;
    } else {
      take(i + 1);
      afterValue = c === ')' || c === ']';
      lastWord = '';
    }
  }
  if (inTemplate || nesting.length !== 1) throw new IndentationNotStrippable('a template literal that does not end');
  return parts.join('');
}

/**
 * {@link stripIndentation}, checked: esbuild must read the result as the same program as
 * `source` (both printed without whitespace must be equal, template text included), with as
 * many lines. Throws IndentationNotStrippable otherwise.
 */
export async function withoutIndentation(source: string): Promise<string> {
  const stripped = stripIndentation(source);
  const print = async (code: string): Promise<string> => (await transform(code, { minifyWhitespace: true, loader: 'js', legalComments: 'none', logLevel: 'silent' })).code;
  const [before, after] = await Promise.all([print(source), print(stripped)]);
  if (before !== after) {
    let at = 0;
    while (before[at] === after[at]) at += 1;
    throw new IndentationNotStrippable(`the program would change near ${JSON.stringify(before.slice(Math.max(0, at - 60), at + 40))}`);
  }
  if (stripped.split('\n').length !== source.split('\n').length) throw new IndentationNotStrippable('the number of lines would change');
  return stripped;
}
