// The reference data service: endpoints, credentials, and how lookups are matched.
import { z } from 'zod';
import { httpUrl, nonEmptyString, positiveMs, ratio, secret } from '../fields.ts';

const refdataOptions = z.strictObject({
  baseUrl: httpUrl().default('http://127.0.0.1:8080').describe('Root of the reference data service.'),
  authUrl: httpUrl().optional().describe('OAuth token endpoint root. Defaults to refdata.baseUrl.'),
  dataExchangeUrl: httpUrl().optional().describe('Data exchange root. Defaults to refdata.baseUrl.'),
  identityUrl: httpUrl().optional().describe('Identity service root. Defaults to refdata.baseUrl.'),
  usageUrl: httpUrl().optional().describe('Usage (quota) service root. Defaults to refdata.baseUrl.'),
  auth: z.enum(['apiKey', 'oauth']).default('apiKey').describe('How the pipeline authenticates.'),
  apiKey: secret().optional().describe('API key; required when auth is apiKey.'),
  clientId: nonEmptyString().optional().describe('OAuth client id; required when auth is oauth.'),
  clientSecret: secret().optional().describe('OAuth client secret; required when auth is oauth.'),
  dataExchangePassword: secret().optional().describe('Password of the data exchange credential.'),
  credentialUsername: nonEmptyString()
    .default('partner-enrich')
    .describe('User name of the data exchange credential.'),
  organizationId: nonEmptyString().default('default-org').describe('Organization whose quota is used.'),
  workspaceId: nonEmptyString().optional().describe('Workspace of the lookups, if the service uses one.'),
  timeoutMs: positiveMs(30_000).describe('Timeout of one HTTP request to the service.'),
});

/**
 * The credentials `refdata.auth` needs, where missing: required by the commands that call the
 * service (loadConfig checks them unless told the command does not), not by those that only
 * work on Kafka (`rerun status`, `topics create`, ...), so that an operator can run those
 * without the service's secrets.
 */
export function missingCredentials(refdata: unknown): z.core.$ZodIssue[] {
  const given = (typeof refdata === 'object' && refdata !== null ? refdata : {}) as Record<string, unknown>;
  const auth = given['auth'] === 'oauth' ? 'oauth' : 'apiKey';
  const required = auth === 'apiKey' ? ['apiKey'] : ['clientId', 'clientSecret'];
  return required
    .filter((field) => given[field] === undefined)
    .map((field) => ({
      code: 'custom' as const,
      path: ['refdata', field],
      message: `required when refdata.auth is ${auth}`,
      input: undefined,
    }));
}

/** Endpoints not set separately live on the base URL (the sandbox serves them all from one root). */
export const refdataSection = refdataOptions.transform((refdata) => ({
  ...refdata,
  authUrl: refdata.authUrl ?? refdata.baseUrl,
  dataExchangeUrl: refdata.dataExchangeUrl ?? refdata.baseUrl,
  identityUrl: refdata.identityUrl ?? refdata.baseUrl,
  usageUrl: refdata.usageUrl ?? refdata.baseUrl,
}));

const featureList = z.array(nonEmptyString()).default([]);

export const lookupSection = z
  .strictObject({
    matchingThreshold: ratio(0.5).describe('Lowest score a candidate needs to be returned.'),
    maxCandidates: z.number().int().min(20).max(200).default(50).describe('Candidates returned per lookup.'),
    dataSources: z
      .array(nonEmptyString())
      .min(1)
      .optional()
      .describe('Data sources to search; all when unset.'),
    featuresOn: featureList.describe('Lookup features switched on.'),
    featuresOff: featureList.describe('Lookup features switched off.'),
    configurationId: nonEmptyString().optional().describe('Matching configuration stored in the service.'),
    fullMatchThreshold: ratio(0.8).describe(
      'Score from which a candidate is a MATCH (measured: 99.9% of best matches at 0.8 are right).',
    ),
    maybeMatchThreshold: ratio(0.6).describe('Score from which a candidate is a MAYBE_MATCH.'),
  })
  .superRefine((lookup, ctx) => {
    if (lookup.maybeMatchThreshold > lookup.fullMatchThreshold) {
      ctx.addIssue({
        code: 'custom',
        path: ['maybeMatchThreshold'],
        message: `must not exceed lookup.fullMatchThreshold (${lookup.fullMatchThreshold})`,
      });
    }
    const switchedOn = new Set(lookup.featuresOn);
    for (const [index, feature] of lookup.featuresOff.entries()) {
      if (switchedOn.has(feature)) {
        ctx.addIssue({
          code: 'custom',
          path: ['featuresOff', index],
          message: `${feature} is also in featuresOn`,
        });
      }
    }
  });
