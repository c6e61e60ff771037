import * as z from 'zod';

/**
 * Every server of the broker's cluster, as hosts dial them (`tls://HOST:PORT`): two to five,
 * none twice. All present the one certificate the mesh pins. A declaration that carries them
 * replaces the host's list; a token carries them to a host that enrols.
 */
export const BrokerUrls = z
  .array(z.url({ protocol: /^tls$/, error: 'expected a broker address like "tls://broker.example:4222"' }).max(255))
  .min(2, { error: 'a cluster has at least two servers' })
  .max(5, { error: 'a cluster has at most five servers' })
  .refine((urls) => new Set(urls).size === urls.length, { error: 'a server is named twice' });
/** See {@link BrokerUrls}. */
export type BrokerUrls = z.infer<typeof BrokerUrls>;
