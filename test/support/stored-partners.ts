// A partner's stored state for tests: its latest record (a minimal one) and what it was matched to.
import type { StoredPartner } from '../../src/pipeline/outputs.ts';

export const storedPartner = (partnerId: string, over: Partial<StoredPartner> = {}): StoredPartner => ({
  hash: `h-${partnerId}`,
  svcId: null,
  outcome: 'NO_MATCH',
  bestCandidate: null,
  record: {
    partnerId,
    sourceSystem: 'ERP',
    names: ['Acme'],
    legalForm: null,
    addresses: [],
    identifiers: [],
    taxNumbers: [],
    changedAt: 1,
  },
  matchedAt: 1,
  source: null,
  ...over,
});
