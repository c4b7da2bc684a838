// Confluent wire format encoding (magic byte, schema id, Avro body) for the output
// topics, with the schema ids registered once at start under the topic-value subjects.
//
// Registration talks to the registry's REST API directly instead of through
// @kafkajs/confluent-schema-registry's register(): that one reads the subject's compatibility
// level, refuses to go on when it differs from the level it was given (BACKWARD by default),
// and on a first registration sets that level, which two replicas starting together race on
// (Apicurio answers the loser 409 "A rule named 'COMPATIBILITY' already exists"). Which
// compatibility a subject has is the operator's decision; the registry enforces it on the
// registration itself, and that verdict is all the pipeline needs.
import { redactUrl } from '../config/index.ts';
import { SerdeError } from '../serde/errors.ts';
import { pipelineSchema, type SchemaName } from '../serde/schemas.ts';

export interface TopicEncoder {
  encode(value: object): Buffer;
}

/** Where the Confluent-compatible registry answers; the shape of the `schemaRegistry` settings. */
export interface RegistryEndpoint {
  url: string;
  username?: string | undefined;
  password?: string | undefined;
}

/** Percent-escapes of the URL parser undone; text it left malformed stays as written. */
function decodeUserinfo(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * The registry's URL without userinfo, with the Basic credentials to send: fetch refuses a URL
 * that carries credentials, so `https://user:password@host` is split into the URL and its
 * credentials, unless `username` and `password` are configured, which win.
 */
export function registryEndpoint(registry: RegistryEndpoint): RegistryEndpoint {
  const url = new URL(registry.url);
  if (url.username === '' && url.password === '') return registry;
  const credentials =
    registry.username !== undefined && registry.password !== undefined
      ? { username: registry.username, password: registry.password }
      : { username: decodeUserinfo(url.username), password: decodeUserinfo(url.password) };
  url.username = '';
  url.password = '';
  // The parser adds a `/` to a bare host; request paths are appended with their own.
  const bare = registry.url.endsWith('/') ? url.href : url.href.replace(/\/$/, '');
  return { url: bare, ...credentials };
}

/** A registry that does not answer within this long is treated as not answering at all. */
export const REGISTRY_REQUEST_TIMEOUT_MS = 10_000;

interface RegistryAnswer {
  status: number;
  id?: number;
  message?: string;
}

async function post(registry: RegistryEndpoint, path: string, schema: string): Promise<RegistryAnswer> {
  const auth =
    registry.username !== undefined && registry.password !== undefined
      ? {
          authorization: `Basic ${Buffer.from(`${registry.username}:${registry.password}`).toString('base64')}`,
        }
      : {};
  let response: Response;
  try {
    response = await fetch(`${registry.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json', ...auth },
      body: JSON.stringify({ schema }),
      signal: AbortSignal.timeout(REGISTRY_REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    const reason = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
    throw new SerdeError(
      'SCHEMA_REGISTRY_UNAVAILABLE',
      `schema registry at ${redactUrl(registry.url)}: ${redactUrl(reason)}`,
      { cause: error },
    );
  }
  const body = (await response.json().catch(() => ({}))) as { id?: unknown; message?: unknown };
  return {
    status: response.status,
    ...(typeof body.id === 'number' ? { id: body.id } : {}),
    ...(typeof body.message === 'string' ? { message: body.message } : {}),
  };
}

/**
 * The id of `schema` under `subject`: registered as a new version when the subject's
 * compatibility level allows it, the existing id when an identical schema is already there.
 */
export async function registerSchema(
  configured: RegistryEndpoint,
  subject: string,
  schema: string,
): Promise<number> {
  const registry = registryEndpoint(configured);
  const path = `/subjects/${encodeURIComponent(subject)}`;
  const registered = await post(registry, `${path}/versions`, schema);
  if (registered.status === 200 && registered.id !== undefined) return registered.id;
  // A registry may refuse a registration that another replica made a moment earlier; an
  // identical schema under the subject is as good as our own registration.
  const found = await post(registry, path, schema);
  if (found.status === 200 && found.id !== undefined) return found.id;
  const details = { subject, status: registered.status };
  const reason = registered.message ?? `HTTP ${registered.status}`;
  if (registered.status === 409)
    throw new SerdeError(
      'SCHEMA_INCOMPATIBLE',
      `the pipeline's schema for ${subject} is incompatible with the subject's versions: ${reason}`,
      { details },
    );
  if (registered.status === 401 || registered.status === 403)
    throw new SerdeError(
      'SCHEMA_REGISTRY_AUTH_FAILED',
      `schema registry at ${redactUrl(registry.url)} refused the credentials (HTTP ${registered.status}) registering ${subject}: ${reason}`,
      { details },
    );
  if (registered.status >= 500 || registered.status === 429)
    throw new SerdeError(
      'SCHEMA_REGISTRY_UNAVAILABLE',
      `schema registry at ${redactUrl(registry.url)}: ${reason}`,
      { details },
    );
  throw new SerdeError('SCHEMA_REGISTRATION_REJECTED', `registering ${subject}: ${reason}`, { details });
}

/** Registers the schema under `<topic>-value` and returns an encoder for it. */
export async function registerTopicEncoder(
  registry: RegistryEndpoint,
  topic: string,
  schemaName: SchemaName,
): Promise<TopicEncoder> {
  const schema = pipelineSchema(schemaName);
  const id = await registerSchema(registry, `${topic}-value`, schema.text);
  // Encoded after the wire format's header in a buffer kept for the next message, then copied
  // out once: avsc's toBuffer() encodes twice whatever exceeds its 1 KB buffer (a MatchResult
  // with a golden record does), and a concat with the header copied it again.
  let scratch = Buffer.alloc(INITIAL_SCRATCH_BYTES);
  scratch.writeUInt8(0, 0);
  scratch.writeInt32BE(id, 1);
  return {
    encode(value) {
      let end = schema.type.encode(value, scratch, HEADER_BYTES);
      if (end < 0) {
        const larger = Buffer.alloc(2 * (scratch.length - end));
        scratch.copy(larger, 0, 0, HEADER_BYTES);
        scratch = larger;
        end = schema.type.encode(value, scratch, HEADER_BYTES);
      }
      return Buffer.from(scratch.subarray(0, end));
    },
  };
}

/** The Confluent wire format's magic byte and schema id. */
const HEADER_BYTES = 5;
const INITIAL_SCRATCH_BYTES = 64 * 1024;
