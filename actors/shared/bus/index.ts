/**
 * The connection to the broker, for both actor trees: a NATS connection that sends nothing
 * until the broker's certificate is known to be the pinned one, and the errors it fails with.
 */
export { connectPinned, type PinnedNatsOptions, type ConnectPinnedOptions } from './connect-pinned';
export { connectPinnedAny } from './connect-pinned-any';
export { probeBrokerCertificate, type BrokerCertificate, type ProbeOptions } from './tls-probe';
export { pinnedDial, PIN_REFUSED_CODE, type PinnedDial, type PinnedTlsOptions } from './pinned-dial';
export { parseBrokerAddress, DEFAULT_BROKER_PORT, type BrokerAddress } from './broker-address';
export {
  FingerprintMismatch,
  BrokerUnreachable,
  BrokerNotNats,
  BrokerWithoutTls,
  BrokerCertificateOutOfDate,
  BrokerRefusedCredentials,
  BrokerAddressInvalid,
} from './bus-errors';
