import vm from 'node:vm';
import { IndentationNotStrippable, stripIndentation, withoutIndentation } from './strip-indentation';

// What the stripped bundle must still be: the same program, line for line. Each case runs the
// code before and after and compares what it computes.

function run(code: string): unknown {
  return vm.runInNewContext(`(() => {\n${code}\n})()`);
}

describe('stripIndentation', () => {
  test('removes the indentation of code and comments, and keeps every line where it was', () => {
    const source = 'function f(a) {\n    // a comment\n    /* a block\n       comment */\n    if (a) {\n        return a + 1;\n    }\n    return 0;\n}\nreturn f(1);\n';
    const stripped = stripIndentation(source);
    expect(stripped).toBe('function f(a) {\n// a comment\n/* a block\ncomment */\nif (a) {\nreturn a + 1;\n}\nreturn 0;\n}\nreturn f(1);\n');
    expect(run(stripped)).toBe(run(source));
  });

  test('keeps the indentation that is a template literal\'s text, through nested templates and braces', () => {
    const source = [
      'const inner = (x) => `',
      '    inner ${x}',
      '      kept`;',
      'const outer = `',
      '  a ${ { v: inner(`',
      '     deep ${"}"}`) }.v } b',
      '    c`;',
      '    return outer;',
    ].join('\n');
    expect(run(stripIndentation(source))).toBe(run(source));
    expect(stripIndentation(source)).toContain('\n    inner ${x}\n      kept`;');
  });

  test('reads quotes and backquotes inside strings and regular expressions as their text', () => {
    const source = [
      'const a = "`  not a template";',
      "const b = '\\'`';",
      'const c = /`[/`]\\/`/g.source;',
      'const d = 4 / 2 / 1;',
      'const e = typeof /x`/.source;',
      'return [a, b, c, d, e, `',
      '    t`];',
    ].join('\n');
    expect(run(stripIndentation(source))).toEqual(run(source));
  });

  test('refuses a string that runs over a line rather than guess where it ends', () => {
    expect(() => stripIndentation('const a = "one\n   two";\n')).toThrow(IndentationNotStrippable);
  });
});

describe('withoutIndentation', () => {
  test('refuses a regular expression the scanner reads as a division, rather than change the program', async () => {
    const source = 'if (ok) /`/.test(s) && f(`\n   keep`);\n';
    await expect(withoutIndentation(source)).rejects.toBeInstanceOf(IndentationNotStrippable);
  });

  test('returns the stripped program when esbuild reads it as the same one', async () => {
    const source = 'if (x) {\n    y(`\n   z`);\n}\n';
    await expect(withoutIndentation(source)).resolves.toBe('if (x) {\ny(`\n   z`);\n}\n');
  });
});
