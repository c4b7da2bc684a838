// Where the pipeline reads and writes: the Kafka cluster, the schema registry and the
// topic names. Every topic name is configurable so that several deployments can share
// one cluster.
import { z } from 'zod';
import {
  durationMs,
  httpUrl,
  nonEmptyString,
  pemOrFile,
  positiveInt,
  secret,
  secretFields,
} from '../fields.ts';
import { OUTPUT_COMPRESSIONS } from '../../kafka/output-compression.ts';
import { DEFAULT_READER_GROUP_PREFIX } from '../../kafka/topic-reader.ts';

/** host:port, with IPv6 hosts in brackets as Kafka writes them. */
const brokerAddress = z
  .string()
  .trim()
  .regex(/^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):\d{1,5}$/, 'must be host:port');

const sslOptions = z.strictObject({
  ca: pemOrFile().optional().describe('CA certificate: PEM text or the path of a readable file.'),
  cert: pemOrFile().optional().describe('Client certificate: PEM text or the path of a readable file.'),
  key: pemOrFile()
    .register(secretFields, { secret: true })
    .optional()
    .describe('Client private key: PEM text or the path of a readable file.'),
  rejectUnauthorized: z
    .boolean()
    .default(true)
    .describe('Reject brokers whose certificate the CA does not vouch for.'),
});

/** A SASL extension as `key=value` (RFC 7628): a key of letters, a value of printable characters. */
const saslExtension = z
  .string()
  .trim()
  .regex(/^[A-Za-z]+=[\x21-\x7E]*$/, 'must be key=value: a key of letters, a value of printable characters');

const PASSWORD_FIELDS = ['username', 'password'] as const;
const OAUTH_FIELDS = ['tokenUrl', 'clientId', 'clientSecret'] as const;

const saslOptions = z
  .strictObject({
    mechanism: z
      .enum(['plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer'])
      .describe(
        'SASL mechanism: `plain` and `scram-*` log in with username and password; `oauthbearer` with OAuth 2.0 tokens of the client credentials grant (tokenUrl, clientId, clientSecret), fetched again before they expire.',
      ),
    username: nonEmptyString().optional().describe('SASL user name (plain, scram-*).'),
    password: secret().optional().describe('SASL password (plain, scram-*).'),
    tokenUrl: httpUrl()
      // fetch refuses a URL with credentials, and names it whole in its error: the client
      // authenticates with clientId and clientSecret.
      .refine((url) => !/^[a-z]+:\/\/[^/?#]*@/i.test(url), {
        message: 'must not hold credentials (user:password@): use clientId and clientSecret',
      })
      .optional()
      .describe(
        "OAUTHBEARER: the identity provider's OAuth 2.0 token endpoint, asked with HTTP Basic client authentication. Its tokens must live 30 s or more: the next token is fetched ahead, 5 min before the last one expires (half-way through a shorter life), and asked again while the endpoint fails; a connection authenticates again 10 s before its token expires.",
      ),
    clientId: nonEmptyString().optional().describe('OAUTHBEARER: OAuth client id.'),
    clientSecret: secret().optional().describe('OAUTHBEARER: OAuth client secret.'),
    scope: nonEmptyString().optional().describe('OAUTHBEARER: scope asked for, if the provider needs one.'),
    extensions: z
      .array(saslExtension)
      .default([])
      .describe(
        "OAUTHBEARER: SASL extensions sent with each token, as `key=value`, e.g. Confluent Cloud's `logicalCluster=lkc-...` and `identityPoolId=pool-...`.",
      ),
  })
  .check(
    z.superRefine(
      (sasl, ctx) => {
        // Each mechanism's own credentials, and none of the other's: a half-changed setup is
        // refused, not guessed at.
        const oauth = sasl.mechanism === 'oauthbearer';
        const named = sasl.mechanism === undefined ? '' : ` with mechanism ${sasl.mechanism}`;
        const issue = (path: string, message: string) =>
          ctx.addIssue({ code: 'custom', path: [path], message });
        for (const field of oauth ? OAUTH_FIELDS : PASSWORD_FIELDS)
          if (sasl[field] === undefined) issue(field, `required${named}`);
        for (const field of oauth ? PASSWORD_FIELDS : [...OAUTH_FIELDS, 'scope' as const])
          if (sasl[field] !== undefined) issue(field, `not used${named}`);
        if (!oauth && (sasl.extensions?.length ?? 0) > 0) issue('extensions', `not used${named}`);
      },
      // Also when another field is wrong (no mechanism given): every problem is said at once.
      { when: ({ value }) => typeof value === 'object' && value !== null },
    ),
  );

export const kafkaSection = z.strictObject({
  brokers: z
    .array(brokerAddress)
    .min(1, 'needs at least one broker')
    .default(['127.0.0.1:9092'])
    .describe('Bootstrap brokers.'),
  clientId: nonEmptyString().default('partner-enrich').describe('Kafka client id.'),
  groupId: nonEmptyString().default('partner-enrich').describe('Consumer group of the input topic.'),
  readerGroupPrefix: nonEmptyString()
    .default(DEFAULT_READER_GROUP_PREFIX)
    .describe(
      'Prefix of the throw-away consumer groups that read the state, storage and dead-letter topics from their start (`run`, `dlq replay`, `rerun`): with ACLs, grant Read on groups of this prefix. One per deployment keeps deployments on one cluster apart.',
    ),
  ssl: z
    .union([z.boolean(), sslOptions])
    .default(false)
    .describe('TLS: `true` with system CAs, or an object with ca, cert, key.'),
  sasl: saslOptions.optional(),
  compression: z
    .enum(OUTPUT_COMPRESSIONS)
    .default('none')
    .describe(
      "Compression of the record batches written to the output topics (matches, events, storage, dead letters): less network and disk for some CPU. The topics' own `compression.type` (default `producer`) decides what the broker keeps. Batches are cut by their uncompressed size, so a message over its topic's max.message.bytes is a dead letter even where it would fit compressed; with a codec, 0.1 % of the limit and 64 bytes are kept for what the codec adds to data that does not compress (gzip and Snappy: about 0.03 %; before, such a batch cut to the limit was refused by the broker, fatal). Every codec is read whatever this says.",
    ),
  connectionTimeoutMs: durationMs(10_000).describe('Time to establish a broker connection.'),
  sessionTimeoutMs: durationMs(30_000).describe('Consumer group session timeout.'),
});

export const schemaRegistrySection = z
  .strictObject({
    url: httpUrl()
      .default('http://127.0.0.1:8081')
      .describe(
        'Confluent-compatible schema registry root. Credentials in it (`https://user:password@host`) are sent as HTTP Basic auth, unless username and password are set.',
      ),
    username: nonEmptyString().optional().describe('Basic-auth user name.'),
    password: secret().optional().describe('Basic-auth password.'),
  })
  .superRefine((registry, ctx) => {
    // Basic auth needs both halves; one alone is a half-finished setup, not "no auth".
    if (registry.username !== undefined && registry.password === undefined) {
      ctx.addIssue({ code: 'custom', path: ['password'], message: 'required when username is set' });
    }
    if (registry.password !== undefined && registry.username === undefined) {
      ctx.addIssue({ code: 'custom', path: ['username'], message: 'required when password is set' });
    }
  });

/** Kafka's legal topic name characters and length. */
const topicName = z
  .string()
  .regex(/^[a-zA-Z0-9._-]{1,249}$/, 'must be 1-249 characters of a-z, A-Z, 0-9, ".", "_", "-"');

const TOPIC_ROLES = ['input', 'matches', 'events', 'storage', 'deadLetters', 'state'] as const;

export const topicsSection = z
  .strictObject({
    input: topicName.default('partners').describe('Partner records to enrich.'),
    matches: topicName.default('partners.matches').describe('Match results.'),
    events: topicName.default('partners.events').describe('BusinessPartnerCreated/Updated/Deleted events.'),
    storage: topicName.default('partners.storage').describe('Compacted partner storage.'),
    deadLetters: topicName.default('partners.dlq').describe('Records that could not be enriched.'),
    state: topicName
      .default('partner-enrich.state')
      .describe(
        "Pipeline state (compacted): the bulk ledger and rerun jobs. Pipelines of other input topics may share it; a second consumer group of the same input topic may not (each would take the other's paid bulks for its own and release them, and both would run its reruns).",
      ),
    partitions: positiveInt(6).describe(
      'Partitions of the topics the pipeline creates; a storage or input topic created beside the other one, which exists, takes its count.',
    ),
    replicationFactor: positiveInt(1).describe('Replication factor of the topics the pipeline creates.'),
  })
  .superRefine((topics, ctx) => {
    // Two roles on one topic would feed outputs back as inputs or mix record types.
    const roleByTopic = new Map<string, string>();
    for (const role of TOPIC_ROLES) {
      const other = roleByTopic.get(topics[role]);
      if (other === undefined) roleByTopic.set(topics[role], role);
      else ctx.addIssue({ code: 'custom', path: [role], message: `must differ from topics.${other}` });
    }
  });
