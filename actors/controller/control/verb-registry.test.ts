import { z } from 'zod';
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
