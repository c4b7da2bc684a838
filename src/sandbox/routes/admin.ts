// Sandbox control, outside the OpenAPI document and without authentication (the sandbox is a
// local tool): read and change fault injection, read the counters and the audits of accepted
// bulks and quota consumes, revise the dataset between two runs of a client, reset to the
// start state.

import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { invalidRequest } from '../errors.ts';
import { bulkAuditEntry } from '../state/bulk-audit.ts';
import { datasetRevisionRequestSchema } from '../state/dataset-revisions.ts';
import { faultSettingsPatchSchema } from '../state/faults.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

/** The body as `schema` reads it, or a 400 naming the first member at fault. */
function parseBody<Schema extends z.ZodType>(schema: Schema, body: unknown, what: string): z.output<Schema> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  const path = issue?.path.join('.') ?? '';
  throw invalidRequest(path === '' ? 'body' : `body.${path}`, issue?.message ?? `invalid ${what}`);
}

export function registerAdminRoutes(app: FastifyInstance, state: SandboxState): void {
  app.get('/admin/faults', async () => state.faults.settings);

  app.put('/admin/faults', async (request) =>
    state.faults.update(parseBody(faultSettingsPatchSchema, request.body, 'fault settings')),
  );

  app.get('/admin/stats', async () => state.stats.snapshot());

  app.get('/admin/bulk-audit', async () => ({ bulks: [...state.bulks.all()].map(bulkAuditEntry) }));

  app.get('/admin/quota-audit', async () => ({ consumes: state.quotas.audit() }));

  app.post('/admin/dataset/revise', async (request) =>
    state.reviseDataset(parseBody(datasetRevisionRequestSchema, request.body, 'dataset revision')),
  );

  app.get('/admin/dataset/revisions', async () => ({ revisions: state.revisions.reports }));

  app.post('/admin/reset', async () => {
    state.reset();
    return { reset: true };
  });
}
