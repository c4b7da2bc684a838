import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { pipelineSchema } from '../../src/serde/schemas.ts';
import { readerNamedLike } from '../../src/serde/writer-names.ts';

const reader = pipelineSchema('PartnerRecord').type;
const inNamespace = (namespace: string): avro.Type =>
  avro.Type.forSchema(
    JSON.parse(
      JSON.stringify(reader.schema()).replaceAll('"partnerenrich.v1.', `"${namespace}.`),
    ) as avro.Schema,
  );

describe('the reader named like the writer', () => {
  it('is the pipeline reader itself for a writer of the same names', () => {
    expect(readerNamedLike(reader, inNamespace('partnerenrich.v1'))).toBe(reader);
  });

  it("takes the writer's full names as aliases of every record of the same unqualified name, nested ones too", () => {
    const named = readerNamedLike(reader, inNamespace('com.acme.crm'));
    const aliases = JSON.stringify(named.schema({ exportAttrs: true })).match(/"aliases":\["[^"]*"\]/g);
    expect(aliases).toEqual(
      ['PartnerAddress', 'PartnerIdentifier', 'PartnerTaxNumber', 'PartnerRecord'].map(
        (name) => `"aliases":["com.acme.crm.${name}"]`,
      ),
    );
    expect(() => named.createResolver(inNamespace('com.acme.crm'))).not.toThrow();
  });

  it('leaves a writer type of another unqualified name to avsc, which refuses it', () => {
    const customer = avro.Type.forSchema({
      ...(reader.schema() as object),
      name: 'com.acme.crm.Customer',
    } as avro.Schema);
    const named = readerNamedLike(reader, customer);
    expect(() => named.createResolver(customer)).toThrow('no alias found for com.acme.crm.Customer');
  });
});
