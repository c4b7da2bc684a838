// Avro bytes with a string that is not UTF-8: avsc refuses to write one, so a record is
// encoded with a placeholder of the same length and the placeholder's bytes are patched.
import type avro from 'avsc';
import { pipelineSchema } from '../../src/serde/schemas.ts';

/** 0xC3 opens a two-byte sequence that 0x28 does not continue: invalid UTF-8. */
export const INVALID_UTF8 = Buffer.from([0xc3, 0x28]);

/** `type.toBuffer(value)` with the one occurrence of `placeholder` replaced by `bytes`. */
export function patched(type: avro.Type, value: unknown, placeholder: string, bytes: Buffer): Buffer {
  const body = type.toBuffer(value);
  const at = body.indexOf(placeholder);
  if (at < 0 || body.indexOf(placeholder, at + 1) >= 0 || Buffer.byteLength(placeholder) !== bytes.length)
    throw new Error('placeholder must occur once and have the length of the bytes');
  bytes.copy(body, at);
  return body;
}

/** A PartnerRecord body whose first name is `Muster<bytes>GmbH`. */
export function avroPartnerWithName(bytes: Buffer): Buffer {
  const placeholder = '#'.repeat(bytes.length);
  return patched(
    pipelineSchema('PartnerRecord').type,
    {
      partnerId: 'P-1',
      sourceSystem: 'ERP',
      names: [`Muster${placeholder}GmbH`],
      legalForm: null,
      addresses: [],
      identifiers: [],
      taxNumbers: [],
      changedAt: 1_700_000_000_000,
    },
    placeholder,
    bytes,
  );
}
