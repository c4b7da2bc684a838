import { describe, expect, it } from 'vitest';
import { PartnerEnrichError } from '../../src/errors.ts';
import { capturedLogger } from '../support/captured-log.ts';
import { Redactor } from '../../src/observability/secret-redactor.ts';

describe('createLogger', () => {
  it('writes one JSON object per line with level, time, name and message', () => {
    const { logger, lines } = capturedLogger();
    logger.info({ bulkId: 'b-1' }, 'bulk submitted');
    expect(lines()).toEqual([
      expect.objectContaining({ level: 30, name: 'partner-enrich', bulkId: 'b-1', msg: 'bulk submitted' }),
    ]);
    expect(lines()[0]?.['time']).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('leaves out entries below its level', () => {
    const { logger, lines } = capturedLogger('warn');
    logger.info('not written');
    logger.warn('written');
    expect(lines().map((line) => line['msg'])).toEqual(['written']);
  });

  it('never writes a credential, at the top level or nested in a logged object', () => {
    const { logger, text, lines } = capturedLogger();
    logger.info(
      {
        apiKey: 'leak-01',
        config: {
          refdata: { apiKey: 'leak-02', clientSecret: 'leak-03', dataExchangePassword: 'leak-04' },
          kafka: { sasl: { password: 'leak-05' }, ssl: { key: 'leak-06' } },
          schemaRegistry: { password: 'leak-07' },
        },
        request: { headers: { authorization: 'Bearer leak-08', 'x-api-key': 'leak-09', cookie: 'leak-10' } },
        response: { body: { access_token: 'leak-11', refresh_token: 'leak-12' } },
        token: 'leak-13',
      },
      'starting',
    );
    for (let index = 1; index <= 13; index++)
      expect(text()).not.toContain(`leak-${String(index).padStart(2, '0')}`);
    expect(lines()[0]).toMatchObject({
      apiKey: '[redacted]',
      request: { headers: { authorization: '[redacted]' } },
    });
  });

  it('regression: a credential deeper than six levels, or under a name in another case (Proxy-Authorization, Password), was written as it came', () => {
    const { logger, text, lines } = capturedLogger();
    logger.info(
      {
        l1: { l2: { l3: { l4: { l5: { password: 'leak-deep', l6: { apiKey: 'leak-deeper' } } } } } },
        headers: { 'Proxy-Authorization': 'Basic leak-proxy', 'Set-Cookie': 'leak-cookie' },
        Password: 'leak-case',
        rows: [[[[[[{ token: 'leak-in-arrays' }]]]]]],
        note: 'the word "password" in a message stays',
      },
      'starting',
    );
    for (const leak of [
      'leak-deep',
      'leak-deeper',
      'leak-proxy',
      'leak-cookie',
      'leak-case',
      'leak-in-arrays',
    ])
      expect(text()).not.toContain(leak);
    expect(lines()[0]).toMatchObject({
      headers: { 'Proxy-Authorization': '[redacted]' },
      Password: '[redacted]',
      note: 'the word "password" in a message stays',
    });
  });

  it('never writes a credential carried in the details of a logged error', () => {
    const { logger, text } = capturedLogger();
    const error = new PartnerEnrichError('REFDATA_UNAUTHORIZED', 'the service refused the credentials', {
      details: { request: { headers: { 'x-api-key': 'leak-in-error' } } },
    });
    logger.error({ err: error }, 'lookup failed');
    expect(text()).toContain('REFDATA_UNAUTHORIZED');
    expect(text()).not.toContain('leak-in-error');
  });

  it("regression: an error that quotes its cause's message says it once (fatal lines said the sink's sentence twice); a cause it does not quote is appended", () => {
    const { logger, lines } = capturedLogger();
    const refused = new Error('The request included a message larger than the max message size');
    const sink = new PartnerEnrichError('OUTPUT_REFUSED_AS_TOO_LARGE', 'the broker refused a record batch', {
      cause: refused,
    });
    const pipeline = new PartnerEnrichError(
      'PIPELINE_OUTPUT_FAILED',
      `outputs could not be written: ${sink.message}`,
      {
        cause: sink,
      },
    );
    logger.fatal({ err: pipeline }, 'fatal failure: stopping');
    expect(lines()[0]).toMatchObject({
      err: {
        code: 'PIPELINE_OUTPUT_FAILED',
        message:
          'outputs could not be written: the broker refused a record batch: The request included a message larger than the max message size',
      },
    });
    expect((lines()[0]?.['err'] as { stack: string }).stack).toContain(
      'caused by: Error: The request included',
    );
  });

  it('keeps Kafka message keys, which are not credentials', () => {
    const { logger, lines } = capturedLogger();
    logger.info({ record: { key: 'partner-42', topic: 'partners' } }, 'dead letter');
    expect(lines()[0]).toMatchObject({ record: { key: 'partner-42' } });
  });

  it('regression: a secret quoted in a message or an error reached the line (redaction went by key only)', () => {
    const { logger, text, lines } = capturedLogger('info', new Redactor(['s3cret-"pass"\\word']));
    const refused = new Error('registry answered 401: bad password s3cret-"pass"\\word');
    logger.error({ err: refused }, 'registering failed for s3cret-"pass"\\word');
    expect(text()).not.toContain('s3cret');
    expect(lines()[0]).toMatchObject({
      msg: 'registering failed for [REDACTED]',
      err: { message: 'registry answered 401: bad password [REDACTED]' },
    });
  });

  it('withholds a line whose secret could only be replaced by breaking its JSON, keeping its level', () => {
    const { logger, text, lines } = capturedLogger('info', new Redactor(['12345']));
    logger.warn({ attempts: 123456 }, 'retrying');
    expect(text()).not.toContain('12345');
    expect(lines()).toEqual([
      expect.objectContaining({ level: 40, msg: 'log line withheld: it quoted a secret' }),
    ]);
  });
});
