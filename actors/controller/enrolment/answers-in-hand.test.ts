import { AnswersInHand } from './answers-in-hand';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the enrolment answers in hand', () => {
  test('is quiet only once every request taken is answered', async () => {
    const answers = new AnswersInHand();
    const winner = answers.hold();
    const loser = answers.hold();
    winner();
    let quiet: boolean | undefined;
    void answers.quiet(10_000).then((value) => (quiet = value));
    await tick();
    expect(quiet).toBeUndefined();
    loser();
    await tick();
    expect(quiet).toBe(true);
  });

  test('is quiet at once when nothing is in hand', async () => {
    await expect(new AnswersInHand().quiet(10_000)).resolves.toBe(true);
  });

  test('counts an answer once, however often its release is called', () => {
    const answers = new AnswersInHand();
    const first = answers.hold();
    answers.hold();
    first();
    first();
    expect(answers.count).toBe(1);
  });

  test('gives up waiting after the longest wait, saying it was not quiet', async () => {
    const answers = new AnswersInHand();
    answers.hold();
    await expect(answers.quiet(20)).resolves.toBe(false);
  });
});
