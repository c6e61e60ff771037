import { ANSWER_BOUND_BYTES } from './calls-bucket';

/** An answer as a kept call holds it. */
export interface BoundedAnswer {
  text: string;
  result: unknown;
  /** True when the answer was longer than the bound and was cut. */
  truncated: boolean;
}

/**
 * The answer as kept: whole when its JSON fits in `bound` bytes; otherwise its result is left
 * out (a program cannot use half a JSON document) and its text is cut to fit, saying how much
 * was left out, so a person still reads how the call began.
 */
export function boundAnswer(answer: { text: string; result: unknown }, bound = ANSWER_BOUND_BYTES): BoundedAnswer {
  const whole: BoundedAnswer = { text: answer.text, result: answer.result ?? null, truncated: false };
  if (Buffer.byteLength(JSON.stringify(whole)) <= bound) return whole;
  const bytes = Buffer.from(answer.text);
  // JSON escaping can at most double a character's bytes (\uXXXX for 1-byte controls is 6x, rare);
  // cut generously, then tighten until it fits.
  let keep = Math.max(0, Math.floor(bound / 2) - 200);
  for (;;) {
    const head = bytes.subarray(0, keep).toString('utf8').replace(/\uFFFD$/, '');
    const cut: BoundedAnswer = { text: `${head}\n… (cut: ${bytes.length - Buffer.byteLength(head)} more bytes of text, and the result, were not kept)`, result: null, truncated: true };
    if (Buffer.byteLength(JSON.stringify(cut)) <= bound || keep === 0) return cut;
    keep = Math.floor(keep / 2);
  }
}
