import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// Every line the controller logs carries its level and the fields a log shipper filters on
// (`node`, `plan`, `verb`, `token`…), not only the sentence: each call of the controller's log
// in actors/controller passes a second argument. A call with the sentence alone fails here,
// naming the file and line, so a new part cannot log without a level.

const ROOT = path.resolve(__dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** The arguments of the call whose `(` is at `open`, split at its top-level commas (strings and templates skipped). */
function argumentsAt(text: string, open: number): string[] {
  const args: string[] = [];
  const modes: string[] = ['code'];
  const braces: number[] = [];
  let depth = 0;
  let from = open + 1;
  for (let i = open; i < text.length; i += 1) {
    const c = text[i] as string;
    const mode = modes[modes.length - 1];
    if (mode === '`') {
      if (c === '\\') i += 1;
      else if (c === '`') modes.pop();
      else if (c === '$' && text[i + 1] === '{') {
        modes.push('${');
        braces.push(0);
        i += 1;
      }
      continue;
    }
    if (mode === '\'' || mode === '"') {
      if (c === '\\') i += 1;
      else if (c === mode) modes.pop();
      continue;
    }
    if (c === '`' || c === '\'' || c === '"') {
      modes.push(c);
      continue;
    }
    if (mode === '${') {
      if (c === '{') braces[braces.length - 1] = (braces.at(-1) ?? 0) + 1;
      else if (c === '}') {
        if (braces.at(-1) === 0) {
          modes.pop();
          braces.pop();
        } else braces[braces.length - 1] = (braces.at(-1) ?? 1) - 1;
      }
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth += 1;
    else if (c === ')' || c === ']' || c === '}') {
      depth -= 1;
      if (depth === 0) {
        args.push(text.slice(from, i));
        return args.filter((arg) => arg.trim() !== '');
      }
    } else if (c === ',' && depth === 1) {
      args.push(text.slice(from, i));
      from = i + 1;
    }
  }
  throw new Error(`the call at ${open} never closes`);
}

describe('the controller\'s log calls', () => {
  test('each passes a level or fields beside its sentence', () => {
    const bare: string[] = [];
    let calls = 0;
    for (const file of sourceFiles(ROOT)) {
      const text = readFileSync(file, 'utf8');
      // ctx.log(…), deps.log(…), this.#log(…), this.log(…), this.#options.log(…), log(…) — not a declaration of one.
      for (const match of text.matchAll(/(?<![\w.])(?:ctx|deps|this\.#ctx|this|this\.#options|options)?\.?#?log\(/g)) {
        const before = text.slice(Math.max(0, (match.index ?? 0) - 12), match.index);
        if (/function\s*$|\w$/.test(before)) continue;
        const open = (match.index ?? 0) + match[0].length - 1;
        const args = argumentsAt(text, open);
        if (args.length === 0 || /^\s*(line|text|\.\.\.)/.test(args[0] ?? '')) continue;
        calls += 1;
        if (args.length < 2) bare.push(`${path.relative(ROOT, file)}:${text.slice(0, open).split('\n').length}`);
      }
    }
    expect(calls).toBeGreaterThan(80);
    expect(bare).toEqual([]);
  });
});
