import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ServerCertificate } from '../testing/capturing-tls-server';

/** A certificate made for a test, with the files it was written to. */
export interface TestCertificate extends ServerCertificate {
  certFile: string;
  keyFile: string;
}

/** What to put in a test certificate. */
export interface TestCertificateOptions {
  /** Subject common name. Default `localhost`. */
  commonName?: string;
  /** subjectAltName entries as openssl spells them. Default `IP:127.0.0.1,DNS:localhost`. */
  altNames?: string;
  /** Sign with this certificate (a CA made here) instead of self-signing. */
  issuer?: TestCertificate;
  /**
   * Self-signed with these validity dates instead of a day from now, as openssl spells them
   * (`20200101000000Z`): for certificates that have expired or are not valid yet.
   */
  validity?: { from: string; to: string };
}

/**
 * Makes a P-256 certificate with openssl into `dir` under `name`.crt/.key, valid for a day.
 * Self-signed by default (openssl marks it CA:TRUE, so it can also be an `issuer`).
 */
export function makeTestCertificate(dir: string, name: string, options: TestCertificateOptions = {}): TestCertificate {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  const subject = `/CN=${options.commonName ?? 'localhost'}`;
  const altNames = `subjectAltName=${options.altNames ?? 'IP:127.0.0.1,DNS:localhost'}`;
  const keyArgs = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile];
  if (options.validity !== undefined) {
    selfSignWithDates(dir, name, keyArgs, subject, altNames, options.validity, certFile);
  } else if (options.issuer === undefined) {
    openssl(['req', '-x509', ...keyArgs, '-subj', subject, '-addext', altNames, '-days', '1', '-out', certFile]);
  } else {
    const request = path.join(dir, `${name}.csr`);
    const extensions = path.join(dir, `${name}.ext`);
    writeFileSync(extensions, `${altNames}\nbasicConstraints=CA:FALSE\n`);
    openssl(['req', '-new', ...keyArgs, '-subj', subject, '-out', request]);
    openssl(['x509', '-req', '-in', request, '-CA', options.issuer.certFile, '-CAkey', options.issuer.keyFile, '-CAcreateserial', '-days', '1', '-extfile', extensions, '-out', certFile]);
  }
  return { certFile, keyFile, certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
}

/** `openssl req -x509` only counts days from now; `openssl ca` takes any dates. */
function selfSignWithDates(dir: string, name: string, keyArgs: string[], subject: string, altNames: string, validity: { from: string; to: string }, certFile: string): void {
  const work = path.join(dir, `${name}.ca`);
  mkdirSync(work);
  writeFileSync(path.join(work, 'index.txt'), '');
  writeFileSync(path.join(work, 'serial'), '01\n');
  writeFileSync(
    path.join(work, 'ca.conf'),
    [
      '[ca]',
      'default_ca = test',
      '[test]',
      `database = ${path.join(work, 'index.txt')}`,
      `new_certs_dir = ${work}`,
      `serial = ${path.join(work, 'serial')}`,
      'default_md = sha256',
      'policy = anything',
      'copy_extensions = copy',
      'unique_subject = no',
      '[anything]',
      'commonName = supplied',
      '',
    ].join('\n'),
  );
  const request = path.join(work, 'request.csr');
  openssl(['req', '-new', ...keyArgs, '-subj', subject, '-addext', altNames, '-out', request]);
  const keyFile = keyArgs[keyArgs.length - 1] as string;
  openssl(['ca', '-batch', '-config', path.join(work, 'ca.conf'), '-selfsign', '-keyfile', keyFile, '-in', request, '-startdate', validity.from, '-enddate', validity.to, '-notext', '-out', certFile]);
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: 'pipe' });
}
