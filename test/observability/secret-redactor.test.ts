import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor, rotatingSecret } from '../../src/observability/secret-redactor.ts';

describe('the secrets redacted from what leaves the process', () => {
  it('replace each secret, also as JSON escapes it', () => {
    const redactor = new Redactor(['pass"word-1']);
    expect(redactor.redact('said pass"word-1 and {"p":"pass\\"word-1"}')).toBe(
      `said ${REDACTED} and {"p":"${REDACTED}"}`,
    );
  });

  it("regression: every OAuth token of a long run stayed a secret, and each log line was searched for all of them; a provider's tokens are kept for the last three", () => {
    const redactor = new Redactor(['client-secret']);
    const onToken = rotatingSecret(redactor);
    const tokens = Array.from({ length: 10 }, (_, i) => `token-${i}-abcdef`);
    for (const token of tokens) onToken(token);
    const line = tokens.join(' ');
    expect(redactor.redact(line)).toBe([...tokens.slice(0, 7), REDACTED, REDACTED, REDACTED].join(' '));
    expect(redactor.redact('client-secret')).toBe(REDACTED);
  });
});
