/**
 * Secrets as the API server stores them: `stringData` is write-only, merged into `data` (base64 of its
 * UTF-8) on every write, its keys winning over `data`'s (core/v1 conversion, Convert_v1_Secret_To_core_Secret);
 * `data` values must be base64 (a []byte field in JSON) or the body is refused before validation;
 * `type` defaults to Opaque. Keys follow IsConfigMapKey, as ConfigMap keys do.
 *
 * Unverified: the exact wording of the decode error (`Secret in version "v1" cannot be handled as a
 * Secret: illegal base64 data at input byte N`, from memory of the codec's error) and kube-sim's base64
 * check (Node's decoder, made strict by re-encoding) being exactly Go's StdEncoding.
 */
import { badRequest, type StatusCause } from './api-status';
import type { KubeObject, Secret } from './wire-types';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
/** The API server's limit on a Secret's data (corev1 MaxSecretSize). */
const MAX_SECRET_BYTES = 1024 * 1024;

/** What decoding a Secret body does: stringData folded into data, data checked to be base64. */
export function decodeSecret(obj: KubeObject): void {
  const secret = obj as Secret;
  for (const value of Object.values(secret.data ?? {})) {
    if (typeof value !== 'string' || !isBase64(value)) {
      throw badRequest(`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${firstBadByte(String(value))}`);
    }
  }
  if (secret.stringData) {
    const encoded = Object.fromEntries(Object.entries(secret.stringData).map(([k, v]) => [k, Buffer.from(String(v), 'utf8').toString('base64')]));
    secret.data = { ...secret.data, ...encoded };
    delete secret.stringData;
  }
}

export function defaultSecret(obj: KubeObject): void {
  (obj as Secret).type ??= 'Opaque';
}

/** ValidateSecret's checks on the data: each key a config key, at most 1 MiB in all. */
export function secretProblems(obj: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  let bytes = 0;
  for (const [key, value] of Object.entries((obj as Secret).data ?? {})) {
    if (key.length > 253 || !CONFIG_KEY.test(key) || key === '.' || key === '..' || key.startsWith('..')) {
      causes.push({
        reason: 'FieldValueInvalid',
        field: `data[${key}]`,
        message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
      });
    }
    bytes += Buffer.from(value, 'base64').length;
  }
  if (bytes > MAX_SECRET_BYTES)
    causes.push({ reason: 'FieldValueTooLong', field: 'data', message: `Too long: may not be more than ${MAX_SECRET_BYTES} bytes` });
  return causes;
}

/** The value of a Secret's key as the kubelet hands it to a container (the bytes as UTF-8 text). */
export function secretValue(secret: Secret, key: string): string | undefined {
  const data = secret.data?.[key];
  return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
}

function isBase64(value: string): boolean {
  const compact = value.replace(/[\r\n]/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) return false;
  return Buffer.from(compact, 'base64').toString('base64') === compact;
}

function firstBadByte(value: string): number {
  const bad = value.search(/[^A-Za-z0-9+/=\r\n]/);
  return bad >= 0 ? bad : value.length - (value.length % 4);
}
