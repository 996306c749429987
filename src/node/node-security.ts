// What guards a node's two ports: who may call the management API (AccessControl: the auth token and the tokens
// file) and over what (HTTPS), and the mutual TLS of the cluster port; each file checked before anything is bound
// and followed on disk after, a change that does not check out kept out and said in health.
import { ActorTsError } from '../errors.js';
import type { Logger } from '../logging.js';
import { AccessControl } from '../management/access.js';
import type { ManagementServerOptions } from '../management/server.js';
import { FollowedTls } from '../tls/followed-tls.js';
import type { TlsFiles, TlsMaterial } from '../tls/tls-files.js';
import type { NodeConfig } from './config.js';

/** The management API's certificate and key files; undefined for plain HTTP. Both or neither (their content is checked where they are loaded). */
export function managementTlsFiles(config: NodeConfig): TlsFiles | undefined {
  const { httpTlsCert: cert, httpTlsKey: key } = config;
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) {
    throw new ActorTsError(
      'invalid_argument',
      'httpTlsCert and httpTlsKey (--http-tls-cert, --http-tls-key) go together',
    );
  }
  return { cert, key };
}

/** The subject pattern peers' certificates must match, checked now; `invalid_argument` when it does not compile. */
export function tlsSubjectOf(config: NodeConfig): RegExp | undefined {
  if (config.tlsSubject === undefined) return undefined;
  if (config.tlsCa === undefined) throw new ActorTsError('invalid_argument', 'tlsSubject needs mutual TLS (tlsCa)');
  try {
    return new RegExp(config.tlsSubject);
  } catch (error) {
    throw new ActorTsError('invalid_argument', `tlsSubject is not a regular expression: ${String(error)}`);
  }
}

/** The cluster port's mutual TLS files; undefined without. All three or none (FollowedTls checks their content). */
export function clusterTlsFiles(config: NodeConfig): TlsFiles | undefined {
  const { tlsCert: cert, tlsKey: key, tlsCa: ca } = config;
  if (cert === undefined && key === undefined && ca === undefined) return undefined;
  if (cert === undefined || key === undefined || ca === undefined) {
    throw new ActorTsError(
      'invalid_argument',
      'tlsCert, tlsKey and tlsCa (--tls-cert, --tls-key, --tls-ca) go together',
    );
  }
  return { cert, key, ca };
}

/** Who may call the management API, and its TLS material when it has some, both followed on disk. */
export interface ManagementSecurity {
  readonly access: AccessControl;
  /** What createManagementServer takes of them: access, and HTTPS with its problems for health. */
  readonly serverOptions: Pick<ManagementServerOptions, 'access' | 'https' | 'problems'>;
  /** Reads every followed file again now (SIGHUP). */
  reload(): void;
  /** Stops following the files. */
  close(): void;
}

/** The management API's access control and TLS (each change applied to new connections by `apply`). */
export function managementSecurity(
  config: NodeConfig,
  logger: Logger,
  apply: (material: TlsMaterial) => void,
  clusterTls: FollowedTls | undefined,
): ManagementSecurity {
  const httpLogger = logger.child({ part: 'http' });
  const access = new AccessControl({ ...config, logger: httpLogger });
  const files = managementTlsFiles(config);
  const https =
    files === undefined
      ? undefined
      : new FollowedTls(files, { purpose: 'management HTTPS', logger: httpLogger, onChange: apply });
  return {
    access,
    serverOptions: {
      access,
      ...(https === undefined ? {} : { https: https.current }),
      problems: () => [...(https?.problems() ?? []), ...(clusterTls?.problems() ?? [])],
    },
    reload() {
      access.reload();
      https?.reload();
      clusterTls?.reload();
    },
    close() {
      access.close();
      https?.close();
      clusterTls?.close();
    },
  };
}
