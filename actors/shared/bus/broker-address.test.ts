import { BrokerAddressInvalid } from './bus-errors';
import { DEFAULT_BROKER_PORT, parseBrokerAddress } from './broker-address';

describe('broker addresses', () => {
  it('takes a host name and port, and sends the host name as the TLS server name', () => {
    expect(parseBrokerAddress('tls://mesh.example:4333')).toEqual({ url: 'tls://mesh.example:4333', host: 'mesh.example', port: 4333, servername: 'mesh.example' });
  });

  it("uses nats-server's client port when the address names none", () => {
    expect(parseBrokerAddress('tls://mesh.example').port).toBe(DEFAULT_BROKER_PORT);
  });

  it('sends no server name for an IP address, since TLS forbids one there', () => {
    expect(parseBrokerAddress('tls://10.0.0.1:4222')).toMatchObject({ host: '10.0.0.1', servername: undefined });
    expect(parseBrokerAddress('tls://[fd00::1]:4222')).toMatchObject({ host: 'fd00::1', port: 4222, servername: undefined });
  });

  it('refuses addresses that carry credentials, a path or another scheme', () => {
    for (const url of ['http://mesh.example:4222', 'tls://alice:pw@mesh.example:4222', 'tls://mesh.example:4222/x', 'tls://mesh.example:4222?q=1', 'mesh.example:4222', '']) {
      expect(() => parseBrokerAddress(url)).toThrow(BrokerAddressInvalid);
    }
  });
});
