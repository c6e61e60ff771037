import type * as z from 'zod';
import { ContractViolation, parseContract } from './parse';

// Test support for the contract suites beside this file; not part of the public API.

/** Asserts `input` parses, and that the parsed value survives JSON and parses to itself. */
export function expectRoundTrip<S extends z.ZodType>(schema: S, input: unknown, contract: string): z.output<S> {
  const parsed = parseContract(schema, input, contract);
  const reread = parseContract(schema, JSON.parse(JSON.stringify(parsed)), contract);
  expect(reread).toEqual(parsed);
  return parsed;
}

/**
 * Asserts `input` is refused with a ContractViolation whose message starts with the offending
 * field's path (`resource.ports[0].host: …`) and, when given, says `says`.
 */
export function expectRefused(schema: z.ZodType, input: unknown, contract: string, path: string, says?: RegExp): ContractViolation {
  let caught: unknown;
  try {
    parseContract(schema, input, contract);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ContractViolation);
  const violation = caught as ContractViolation;
  expect(violation.message.startsWith(`${path}: `)).toBe(true);
  if (says !== undefined) expect(violation.message).toMatch(says);
  return violation;
}

/** A malformed input, the path its refusal must name, and optionally what it must say. */
export interface RefusalCase {
  name: string;
  input: unknown;
  path: string;
  says?: RegExp;
}
