// Supplier gateway records created through POST /sgw/businesspartners. A record is found again
// by its SupplierNumber or by its platform id `SGW:<SupplierNumber>`; creating one with a
// SupplierNumber that exists replaces it.

import type { Schemas } from '../../refdata/index.ts';

export type SupplierGateway = Schemas['SupplierGateway'];

export interface SupplierRecord {
  svcId: string;
  supplierNumber: string;
  supplierGateway: SupplierGateway;
}

const SUPPLIER_GATEWAY_PREFIX = 'SGW';

export class SupplierGatewayStore {
  readonly #bySupplierNumber = new Map<string, SupplierRecord>();
  #generated = 0;

  /** Stores the record; `replaced` tells whether one with its SupplierNumber existed. */
  upsert(supplierGateway: SupplierGateway): { record: SupplierRecord; replaced: boolean } {
    const supplierNumber = supplierGateway.SupplierNumber ?? this.#nextSupplierNumber();
    const replaced = this.#bySupplierNumber.has(supplierNumber);
    const record: SupplierRecord = {
      svcId: `${SUPPLIER_GATEWAY_PREFIX}:${supplierNumber}`,
      supplierNumber,
      supplierGateway: { ...structuredClone(supplierGateway), SupplierNumber: supplierNumber },
    };
    this.#bySupplierNumber.set(supplierNumber, record);
    return { record, replaced };
  }

  find(query: {
    svcId?: string | undefined;
    supplierNumber?: string | undefined;
  }): SupplierRecord | undefined {
    if (query.supplierNumber !== undefined) return this.#bySupplierNumber.get(query.supplierNumber);
    const prefix = `${SUPPLIER_GATEWAY_PREFIX}:`;
    if (query.svcId?.startsWith(prefix)) return this.#bySupplierNumber.get(query.svcId.slice(prefix.length));
    return undefined;
  }

  clear(): void {
    this.#bySupplierNumber.clear();
    this.#generated = 0;
  }

  #nextSupplierNumber(): string {
    let number: string;
    do {
      this.#generated += 1;
      number = `SUP-${String(this.#generated).padStart(6, '0')}`;
    } while (this.#bySupplierNumber.has(number));
    return number;
  }
}
