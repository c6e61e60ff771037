import type * as z from 'zod';
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
  query: boolean;
  secretAnswer: boolean;
  /** The part that registered it, when registered through a scoped view (see `scoped`). */
  owner: string | undefined;
}

// Not exported: only `scoped` can make a registry that shares another's verbs.
class ScopedView {
  constructor(
    readonly verbs: Map<string, RegisteredVerb>,
    readonly owner: string,
    readonly queries: ReadonlySet<string>,
    readonly secretAnswers: ReadonlySet<string>,
  ) {}
}

/** How a verb is registered. */
export interface VerbOptions {
  /**
   * True for a verb that only reads (`status`, `nodes.list`): it is answered at once and not
   * kept as a call. Every other verb acts, and each call of it gets a call id and is kept.
   */
  query?: boolean;
  /**
   * True for a verb whose answer carries a secret (`token.issue`: the one-time token). Its call
   * is kept without the answer, and its caller always waits for the answer itself, since it can
   * be read nowhere else.
   */
  secretAnswer?: boolean;
}

/**
 * The verbs the serving controller answers on `mesh.control.<verb>`. Each declares its
 * arguments as a zod object; a call carrying any other argument is refused naming it
 * (ArgumentNotDeclared), whether or not the schema is strict, and a declared one with a bad
 * value is refused naming the argument (ArgumentInvalid). Nothing runs unless all arguments pass.
 */
export class VerbRegistry {
  readonly #verbs: Map<string, RegisteredVerb>;
  readonly #owner: string | undefined;
  readonly #queries: ReadonlySet<string>;
  readonly #secretAnswers: ReadonlySet<string>;

  /** An empty registry. (`view` is how `scoped` makes a view of another one; it cannot be made elsewhere.) */
  constructor(view?: ScopedView) {
    this.#verbs = view?.verbs ?? new Map();
    this.#owner = view?.owner;
    this.#queries = view?.queries ?? new Set();
    this.#secretAnswers = view?.secretAnswers ?? new Set();
  }

  /**
   * A view of this registry for one part of the supervision tree (`owner`): verbs registered
   * through it land here, and registering again a verb the same owner registered before
   * replaces it instead of throwing, since a part that is restarted registers its verbs again.
   * `queries` and `secretAnswers` name verbs of the part that only read, or whose answer carries
   * a secret, for parts that register them without saying so (see VerbOptions).
   */
  scoped(owner: string, options: { queries?: readonly string[]; secretAnswers?: readonly string[] } = {}): VerbRegistry {
    return new VerbRegistry(new ScopedView(this.#verbs, owner, new Set(options.queries ?? []), new Set(options.secretAnswers ?? [])));
  }

  /**
   * Adds a verb. Names are dotted lowercase words (`token.issue`, `node.release`); registering
   * one twice is a wiring fault and throws (except again by the same owner, see `scoped`).
   */
  register<S extends z.ZodObject>(verb: string, args: S, handler: VerbHandler<z.output<S>>, options: VerbOptions = {}): void {
    if (!ControlRequest.shape.verb.safeParse(verb).success) throw new TypeError(`a verb is dotted lowercase words like "token.issue", got ${JSON.stringify(verb)}`);
    const existing = this.#verbs.get(verb);
    if (existing !== undefined && (this.#owner === undefined || existing.owner !== this.#owner)) throw new TypeError(`the verb ${verb} is registered twice`);
    this.#verbs.set(verb, {
      args,
      handler: handler as VerbHandler<never>,
      query: options.query === true || this.#queries.has(verb),
      secretAnswer: options.secretAnswer === true || this.#secretAnswers.has(verb),
      owner: this.#owner,
    });
  }

  /** True for a registered verb that only reads (see VerbOptions.query). */
  isQuery(verb: string): boolean {
    return this.#verbs.get(verb)?.query === true;
  }

  /** True for a registered verb whose answer carries a secret (see VerbOptions.secretAnswer). */
  hasSecretAnswer(verb: string): boolean {
    return this.#verbs.get(verb)?.secretAnswer === true;
  }

  /** True when the verb is registered. */
  has(verb: string): boolean {
    return this.#verbs.has(verb);
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
