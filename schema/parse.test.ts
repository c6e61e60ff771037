import * as z from 'zod';
import { OperatorError } from './operator-error';
import { ContractViolation, formatPath, parseContract } from './parse';

const Sample = z.strictObject({
  name: z.string().min(1),
  ports: z.array(z.strictObject({ host: z.int().min(1) })),
  labels: z.record(z.string(), z.string()).optional(),
  size: z.int().default(3),
});

function violationOf(input: unknown, contract = 'sample'): ContractViolation {
  try {
    parseContract(Sample, input, contract);
  } catch (error) {
    if (error instanceof ContractViolation) return error;
    throw error;
  }
  throw new Error('expected a ContractViolation');
}

describe('parseContract', () => {
  it('returns the parsed value with defaults applied', () => {
    expect(parseContract(Sample, { name: 'a', ports: [] }, 'sample')).toEqual({ name: 'a', ports: [], size: 3 });
  });

  it('throws an operator error naming the contract and the first failing field path', () => {
    const violation = violationOf({ name: 'a', ports: [{ host: 80 }, { host: 0 }] });
    expect(violation).toBeInstanceOf(OperatorError);
    expect(violation.contract).toBe('sample');
    expect(violation.message).toMatch(/^sample\.ports\[1\]\.host: /);
  });

  it('lists every problem in issues and counts the rest in the message', () => {
    const violation = violationOf({ name: '', ports: 'none', extra: true });
    expect(violation.issues.map((issue) => issue.path)).toEqual(['sample.name', 'sample.ports', 'sample.extra']);
    expect(violation.message).toBe('sample.name: must not be empty (and 2 more)');
  });

  it('says a missing field is required rather than "received undefined"', () => {
    expect(violationOf({ ports: [] }).message).toBe('sample.name: required');
  });

  it('names an unknown field by its own path', () => {
    expect(violationOf({ name: 'a', ports: [{ host: 1, guest: 2 }] }).message).toBe(
      'sample.ports[0].guest: unknown field: this contract does not carry it',
    );
  });

  it('says what type was expected and what came', () => {
    expect(violationOf({ name: 7, ports: [] }).message).toBe('sample.name: expected string, got number');
    expect(violationOf(null).message).toBe('sample: expected object, got null');
  });

  it('tells the reader to fix that field or regenerate the file', () => {
    expect(violationOf({ ports: [] }, 'state.json').next).toBe('Fix state.json.name, or regenerate the state.json from its source, and try again.');
  });

  it('uses a next step the caller gives', () => {
    try {
      parseContract(Sample, {}, 'declaration', { next: 'Ask the controller to send it again: mesh-control node resend workstation' });
      throw new Error('expected a ContractViolation');
    } catch (error) {
      expect((error as ContractViolation).next).toMatch(/^Ask the controller/);
    }
  });

  it('prints as two plain lines, without a stack', () => {
    expect(violationOf({ ports: [] }).toText()).toBe(
      'error: sample.name: required\nnext:  Fix sample.name, or regenerate the sample from its source, and try again.\n',
    );
  });
});

describe('formatPath', () => {
  it('writes indices in brackets and plain keys after dots', () => {
    expect(formatPath('declaration', ['resources', 2, 'mode'])).toBe('declaration.resources[2].mode');
  });

  it('quotes keys that are not identifiers', () => {
    expect(formatPath('resource', ['env', 'BAD NAME'])).toBe('resource.env["BAD NAME"]');
  });

  it('is the contract name alone for the root', () => {
    expect(formatPath('report', [])).toBe('report');
  });
});
