import * as z from 'zod';
import type { ControllerContext } from '../controller-context';
import { ArgumentInvalid, ArgumentNotDeclared, VerbUnknown } from './control-errors';
import { VerbRegistry } from './verb-registry';

// The registry never touches the context itself; verbs do. An empty stand-in is enough here.
const ctx = {} as ControllerContext;

function registry(): { verbs: VerbRegistry; calls: unknown[] } {
  const calls: unknown[] = [];
  const verbs = new VerbRegistry();
  verbs.register('token.issue', z.object({ node: z.string().regex(/^[a-z]+$/, { error: 'expected a node name' }).optional(), ttl: z.string().optional() }), async (_ctx, args) => {
    calls.push(args);
    return { result: args, text: 'issued' };
  });
  return { verbs, calls };
}

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

describe('VerbRegistry', () => {
  test('runs a verb with its declared arguments', async () => {
    const { verbs, calls } = registry();
    await expect(verbs.call(ctx, 'token.issue', { node: 'laptop' })).resolves.toEqual({ result: { node: 'laptop' }, text: 'issued' });
    expect(calls).toEqual([{ node: 'laptop' }]);
  });

  test('refuses an argument the verb does not declare, naming it, and runs nothing', async () => {
    const { verbs, calls } = registry();
    const error = await refusal(verbs.call(ctx, 'token.issue', { node: 'laptop', forever: true }));
    expect(error).toBeInstanceOf(ArgumentNotDeclared);
    expect((error as ArgumentNotDeclared).argument).toBe('forever');
    expect((error as ArgumentNotDeclared).message).toContain('`forever`');
    expect((error as ArgumentNotDeclared).next).toContain('`node`, `ttl`');
    expect(calls).toEqual([]);
  });

  test('refuses an undeclared argument even when the verb\'s schema would strip it', async () => {
    // z.object (not strict) drops unknown keys silently; the registry must not.
    const { verbs } = registry();
    await expect(verbs.call(ctx, 'token.issue', { nod: 'laptop' })).rejects.toThrow(ArgumentNotDeclared);
  });

  test('refuses a declared argument with a bad value, naming the argument', async () => {
    const { verbs, calls } = registry();
    const error = await refusal(verbs.call(ctx, 'token.issue', { node: 'Not A Name' }));
    expect(error).toBeInstanceOf(ArgumentInvalid);
    expect((error as ArgumentInvalid).argument).toBe('node');
    expect((error as ArgumentInvalid).value).toBe('Not A Name');
    expect(calls).toEqual([]);
  });

  test('refuses a verb it does not have, listing those it has', async () => {
    const { verbs } = registry();
    const error = await refusal(verbs.call(ctx, 'node.frobnicate', {}));
    expect(error).toBeInstanceOf(VerbUnknown);
    expect((error as VerbUnknown).next).toContain('token.issue');
  });

  test('will not register one verb twice, nor a verb that is not dotted lowercase words', () => {
    const { verbs } = registry();
    const handler = async () => ({ result: null, text: '' });
    expect(() => verbs.register('token.issue', z.object({}), handler)).toThrow(/twice/);
    expect(() => verbs.register('Token Issue', z.object({}), handler)).toThrow(/dotted lowercase/);
    expect(verbs.verbs()).toEqual(['token.issue']);
  });
});

describe('VerbRegistry.scoped', () => {
  const answer = (text: string) => async () => ({ result: null, text });

  test('lets a restarted part register its verbs again, the last handler answering', async () => {
    const verbs = new VerbRegistry();
    verbs.scoped('reports').register('reports.list', z.strictObject({}), answer('first'));
    verbs.scoped('reports').register('reports.list', z.strictObject({}), answer('second'));
    expect(await verbs.call(ctx, 'reports.list', {})).toEqual({ result: null, text: 'second' });
    expect(verbs.verbs()).toEqual(['reports.list']);
  });

  test('still refuses a verb registered twice by two parts, or by a part and the registry itself', () => {
    const verbs = new VerbRegistry();
    verbs.scoped('reports').register('reports.list', z.strictObject({}), answer('reports'));
    expect(() => verbs.scoped('status').register('reports.list', z.strictObject({}), answer('status'))).toThrow(/twice/);
    expect(() => verbs.register('reports.list', z.strictObject({}), answer('root'))).toThrow(/twice/);
    verbs.register('node.release', z.strictObject({}), answer('root'));
    expect(() => verbs.scoped('declarations').register('node.release', z.strictObject({}), answer('part'))).toThrow(/twice/);
  });

  test('says which verbs only read: declared so, or named as queries of the part that registers them', () => {
    const verbs = new VerbRegistry();
    verbs.register('status', z.strictObject({}), answer('status'), { query: true });
    verbs.scoped('nodes', { queries: ['nodes.list'] }).register('nodes.list', z.strictObject({}), answer('nodes'));
    verbs.scoped('nodes', { queries: ['nodes.list'] }).register('node.release', z.strictObject({}), answer('release'));
    expect(['status', 'nodes.list', 'node.release', 'unknown'].map((verb) => verbs.isQuery(verb))).toEqual([true, true, false, false]);
    expect(verbs.has('node.release')).toBe(true);
    expect(verbs.hasSecretAnswer('node.release')).toBe(false);
    expect(verbs.has('unknown')).toBe(false);
  });
});

test('says which verbs answer with a secret: declared so, or named by the part that registers them', () => {
  const verbs = new VerbRegistry();
  const handler = async () => ({ result: null, text: '' });
  verbs.register('secret.make', z.strictObject({}), handler, { secretAnswer: true });
  verbs.scoped('enrolment', { secretAnswers: ['token.issue'] }).register('token.issue', z.strictObject({}), handler);
  verbs.scoped('enrolment', { secretAnswers: ['token.issue'] }).register('token.list', z.strictObject({}), handler);
  expect(['secret.make', 'token.issue', 'token.list'].map((verb) => verbs.hasSecretAnswer(verb))).toEqual([true, true, false]);
});
