import type { z } from 'zod';
import { ControlRequest } from '../../../schema/control';
import type { ControllerContext } from '../controller-context';
import { ArgumentInvalid, ArgumentNotDeclared, VerbUnknown } from './control-errors';

/** What a verb answers: a result for programs (`--json`) and the same facts as text for a person. */
export interface VerbAnswer<R = unknown> {
  result: R;
  text: string;
}

/** Does a verb's work with arguments already checked against its schema. */
export type VerbHandler<A> = (ctx: ControllerContext, args: A) => Promise<VerbAnswer>;

interface RegisteredVerb {
  args: z.ZodObject;
  handler: VerbHandler<never>;
}

/**
 * The verbs the serving controller answers on `mesh.control.<verb>`. Each declares its
 * arguments as a zod object; a call carrying any other argument is refused naming it
 * (ArgumentNotDeclared), whether or not the schema is strict, and a declared one with a bad
 * value is refused naming the argument (ArgumentInvalid). Nothing runs unless all arguments pass.
 */
export class VerbRegistry {
  readonly #verbs = new Map<string, RegisteredVerb>();

  /**
   * Adds a verb. Names are dotted lowercase words (`token.issue`, `node.release`); registering
   * one twice is a wiring fault and throws.
   */
  register<S extends z.ZodObject>(verb: string, args: S, handler: VerbHandler<z.output<S>>): void {
    if (!ControlRequest.shape.verb.safeParse(verb).success) throw new TypeError(`a verb is dotted lowercase words like "token.issue", got ${JSON.stringify(verb)}`);
    if (this.#verbs.has(verb)) throw new TypeError(`the verb ${verb} is registered twice`);
    this.#verbs.set(verb, { args, handler: handler as VerbHandler<never> });
  }

  /** The registered verbs, sorted. */
  verbs(): string[] {
    return [...this.#verbs.keys()].sort();
  }

  /** The arguments a verb declares, sorted; undefined for a verb not registered. */
  argumentsOf(verb: string): string[] | undefined {
    const entry = this.#verbs.get(verb);
    return entry === undefined ? undefined : Object.keys(entry.args.shape).sort();
  }

  /** Checks the arguments and runs the verb. */
  async call(ctx: ControllerContext, verb: string, args: Readonly<Record<string, unknown>>): Promise<VerbAnswer> {
    const entry = this.#verbs.get(verb);
    if (entry === undefined) throw new VerbUnknown(verb, this.verbs());
    const declared = Object.keys(entry.args.shape).sort();
    const undeclared = Object.keys(args).find((name) => !declared.includes(name));
    if (undeclared !== undefined) throw new ArgumentNotDeclared(verb, undeclared, declared);
    const parsed = entry.args.safeParse(args);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const name = String(issue?.path[0] ?? declared[0] ?? 'arguments');
      const given = args[name];
      const problem = given === undefined ? 'is required' : issue?.message ?? 'is not usable';
      throw new ArgumentInvalid(verb, name, problem, given === undefined ? undefined : typeof given === 'string' ? given : JSON.stringify(given));
    }
    return entry.handler(ctx, parsed.data as never);
  }
}
