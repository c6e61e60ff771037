/**
 * The error convention for a person lives in schema/operator-error: schema/ imports nothing from
 * actors/, and a contract that does not hold (ContractViolation) is itself an operator error.
 * Actors keep importing it from here, one name for both sides.
 */
export { OperatorError, isOperatorError, quote } from '../../schema/operator-error';
