/**
 * A few words for why a socket failed, for BrokerUnreachable: the errno spelled out where a
 * person would not know it, else the error's own message.
 */
export function describeSocketError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ETIMEDOUT':
      return 'timed out';
    case 'EHOSTUNREACH':
      return 'no route to host';
    case 'ENETUNREACH':
      return 'network unreachable';
    case 'ENOTFOUND':
      return 'host name not found';
    case 'EAI_AGAIN':
      return 'host name lookup failed for now';
    case 'EPIPE':
      return 'connection closed while writing';
    default:
      if (error instanceof Error) return error.message;
      // A bare code the table does not word (e.g. EPROTO): the code itself still says something.
      return typeof code === 'string' ? code : String(error);
  }
}
