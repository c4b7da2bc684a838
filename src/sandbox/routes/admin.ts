// Sandbox control, outside the OpenAPI document and without authentication (the sandbox is a
// local tool): read and change fault injection, read the counters and the audit of accepted
// bulks, reset to the start state.

import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors.ts';
import { bulkAuditEntry } from '../state/bulk-audit.ts';
import { faultSettingsPatchSchema } from '../state/faults.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

export function registerAdminRoutes(app: FastifyInstance, state: SandboxState): void {
  app.get('/admin/faults', async () => state.faults.settings);

  app.put('/admin/faults', async (request) => {
    const parsed = faultSettingsPatchSchema.safeParse(request.body ?? {});
    if (!parsed.success) {
      const [issue] = parsed.error.issues;
      throw invalidRequest(`body.${issue?.path.join('.') ?? ''}`, issue?.message ?? 'invalid fault settings');
    }
    return state.faults.update(parsed.data);
  });

  app.get('/admin/stats', async () => state.stats.snapshot());

  app.get('/admin/bulk-audit', async () => ({ bulks: [...state.bulks.all()].map(bulkAuditEntry) }));

  app.post('/admin/reset', async () => {
    state.reset();
    return { reset: true };
  });
}
