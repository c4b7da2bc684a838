// The bulk API with a span per call (see observability/tracing.ts): the create is the bulk
// submit; a read without a cursor asks for the bulk's status (a poll), a read with one fetches
// a further page of its results.
import { traced } from '../observability/tracing.ts';
import type { BulkLookupApi } from './bulk-api.ts';

export function tracedBulkApi(api: BulkLookupApi): BulkLookupApi {
  return {
    createBulk: (tasks, parameters, timeoutMs) =>
      traced(
        'bulk submit',
        { 'partner_enrich.bulk.tasks': tasks.length },
        () => api.createBulk(tasks, parameters, timeoutMs),
        ({ id }) => ({ 'partner_enrich.bulk.id': id }),
      ),
    readBulk: (id, page) =>
      traced(
        page.startAfter === undefined ? 'bulk poll' : 'bulk page read',
        { 'partner_enrich.bulk.id': id },
        () => api.readBulk(id, page),
        (read) => ({
          'partner_enrich.bulk.status': read.status,
          'partner_enrich.bulk.results': read.results.length,
        }),
      ),
  };
}
