import * as z from 'zod';
import type { ControllerPart } from '../serve/controller-parts';
import { announceNextCertificate, formatRotation, switchBrokerCertificate } from './rotate-broker-certificate';

/** The arguments of `broker.certificate.rotate`: announce (default), or switch, forced or not. */
export const RotateCertificateArgs = z.strictObject({
  switch: z.boolean().optional(),
  force: z.boolean().optional(),
});

/**
 * The verb `broker.certificate.rotate` (`mesh-control broker rotate-certificate`): make and
 * announce the broker's next certificate, or with `switch` make the broker present it. One
 * rotation step at a time in this process: two at once could each make a next certificate.
 */
export const certificatePart: ControllerPart = {
  name: 'certificate',
  start: async (_ctx, verbs) => {
    let running: Promise<unknown> = Promise.resolve();
    verbs.register('broker.certificate.rotate', RotateCertificateArgs, async (ctx, args) => {
      const step = running.catch(() => undefined).then(() => (args.switch === true ? switchBrokerCertificate(ctx, { force: args.force === true }) : announceNextCertificate(ctx)));
      running = step;
      const outcome = await step;
      return { result: outcome, text: formatRotation(outcome) };
    });
    return { stop: async () => undefined };
  },
};
