/**
 * What `work` was refused with, once the test has checked it is a `condition`: the test fails
 * when the work succeeds or fails with anything else. The answer is typed as the condition, so
 * a test reads its fields (`next`, `retryable`) without a cast.
 */
export async function refusalOf<T extends Error>(work: Promise<unknown>, condition: abstract new (...args: never[]) => T): Promise<T> {
  const failure = await work.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(condition);
  return failure as T;
}
