import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { iterateBulkLookupResults, waitForBulkLookup, type Schemas } from '../../src/refdata/index.ts';
import type { DatasetRevisionReport, RevisionKind } from '../../src/sandbox/index.ts';
import { acrossMatchThreshold, classifyMatch } from '../../src/sandbox/matching/classification.ts';
import { upstreamPartners } from '../../src/sandbox/upstream-partners.ts';
import { reviseSandboxDataset, sandboxDatasetRevisions } from '../chaos/support/sandbox-process.ts';
import { startTestSandbox, type TestSandbox } from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
let instant: TestSandbox;
beforeAll(async () => {
  [sandbox, instant] = await Promise.all([startTestSandbox(), startTestSandbox({ mode: 'instant' })]);
});
afterAll(async () => {
  await Promise.all([sandbox.close(), instant.close()]);
});

/** Partners as upstream systems publish them: faithful, noisy and unknown to the dataset. */
function tasks(of: TestSandbox): Schemas['BulkLookupTask'][] {
  const records = upstreamPartners(of.state.dataset, {
    count: 500,
    seed: 11,
    invalid: 0,
    resent: 0,
    updated: 0,
  });
  return records.flatMap((record) =>
    record.partner === null
      ? []
      : [{ id: record.partner.partnerId, businessPartner: { jsonRecord: toJsonRecord(record.partner) } }],
  );
}

type TaskResult = Omit<Schemas['BulkLookupResult'], 'status' | 'taskId'>;
type Results = Map<string, TaskResult>;

/** Each task's candidates and golden record, from one bulk lookup. */
async function lookUp(of: TestSandbox): Promise<Results> {
  const created = await of.client.createBulkLookup({ body: { tasks: tasks(of) } });
  await waitForBulkLookup(of.client, created.id ?? '', { initialDelayMs: 5, maxDelayMs: 20 });
  const results: Results = new Map();
  for await (const { taskId, status: _status, ...result } of iterateBulkLookupResults(of.client, {
    path: { id: created.id ?? '' },
    query: { limit: 500 },
  })) {
    results.set(taskId ?? '', result);
  }
  return results;
}

/** What a client keeps of a lookup (the pipeline's MatchResult): the outcome, and the svcId of a (maybe) match. */
function matchOf(result: TaskResult | undefined): string {
  const best = result?.values?.[0];
  const outcome = classifyMatch(best?.score);
  return outcome === 'NO_MATCH' ? outcome : `${outcome} ${best?.svcId ?? ''}`;
}

const svcIdsOf = (result: TaskResult | undefined): string[] => [
  ...(result?.values ?? []).map((match) => match.svcId ?? ''),
  ...(result?.goldenRecord?.svcId === undefined ? [] : [result.goldenRecord.svcId]),
];

/** Revised organizations by each svcId they had before the revision. */
function revisedBySvcId(report: DatasetRevisionReport) {
  const bySvcId = new Map<string, { kind: RevisionKind; after: string | null; all: string[] }>();
  for (const org of report.organizations) {
    const all = org.svcIds.map(({ before }) => before);
    for (const { before, after } of org.svcIds) bySvcId.set(before, { kind: org.kind, after, all });
  }
  return bySvcId;
}

const revise = (of: TestSandbox, body: unknown) => of.raw('POST', '/admin/dataset/revise', { body });

describe('sandbox dataset revisions', () => {
  it('changes the match of exactly the lookups whose best match was a revised organization, and no other lookup', async () => {
    await sandbox.raw('POST', '/admin/reset');
    const before = await lookUp(sandbox);
    const report = await reviseSandboxDataset(sandbox.url, { seed: 5, share: 0.2 });
    const after = await lookUp(sandbox);

    expect(report).toMatchObject({
      revision: 1,
      seed: 5,
      share: 0.2,
      counts: { relisted: 100, withdrawn: 100 },
    });
    expect(report.organizations).toHaveLength(300);
    const revised = revisedBySvcId(report);
    const changedByKind: Record<RevisionKind, number> = { relisted: 0, withdrawn: 0, reclassified: 0 };
    for (const [taskId, was] of before) {
      const now = after.get(taskId);
      const best = was.values?.[0];
      const organization = revised.get(best?.svcId ?? '');
      const matched = classifyMatch(best?.score) !== 'NO_MATCH';
      if (organization === undefined || !matched) {
        expect(matchOf(now), taskId).toBe(matchOf(was));
        // A lookup that met no revised record answers exactly what it answered before.
        if (!svcIdsOf(was).some((svcId) => revised.has(svcId))) expect(now, taskId).toEqual(was);
        continue;
      }
      expect(matchOf(now), taskId).not.toBe(matchOf(was));
      changedByKind[organization.kind] += 1;
      const nowBest = now?.values?.[0];
      if (organization.kind === 'relisted')
        expect(nowBest, taskId).toMatchObject({ svcId: organization.after, score: best?.score });
      if (organization.kind === 'withdrawn')
        expect(
          svcIdsOf(now).filter((svcId) => organization.all.includes(svcId)),
          taskId,
        ).toEqual([]);
      if (organization.kind === 'reclassified') {
        expect(classifyMatch(nowBest?.score), taskId).toBe(
          classifyMatch(best?.score) === 'MATCH' ? 'MAYBE_MATCH' : 'MATCH',
        );
      }
    }
    // Every kind of change is met by some lookup, so the checks above are not vacuous.
    expect(
      Object.values(changedByKind).every((count) => count > 0),
      JSON.stringify(changedByKind),
    ).toBe(true);
  });

  it('revises the same organizations the same way for the same seed, and others for another seed', async () => {
    await sandbox.raw('POST', '/admin/reset');
    const first = (await revise(sandbox, { seed: 9, share: 0.05 })).body;
    await sandbox.raw('POST', '/admin/reset');
    const again = (await revise(sandbox, { seed: 9, share: 0.05 })).body;
    await sandbox.raw('POST', '/admin/reset');
    const other = (await revise(sandbox, { seed: 10, share: 0.05 })).body as unknown as DatasetRevisionReport;
    expect(again).toEqual(first);
    expect(other.organizations.map((org) => org.id)).not.toEqual(
      (first as unknown as DatasetRevisionReport).organizations.map((org) => org.id),
    );
  });

  it('revises only organizations not revised yet, with the kinds asked for, and lists every revision', async () => {
    await sandbox.raw('POST', '/admin/reset');
    const first = await reviseSandboxDataset(sandbox.url, { seed: 1, share: 0.1, kinds: ['withdrawn'] });
    const second = await reviseSandboxDataset(sandbox.url, { seed: 1, share: 0.1, kinds: ['relisted'] });
    expect(first.counts).toEqual({ relisted: 0, withdrawn: 150, reclassified: 0 });
    expect(second).toMatchObject({ revision: 2, counts: { relisted: 150, withdrawn: 0, reclassified: 0 } });
    const firstIds = new Set(first.organizations.map((org) => org.id));
    expect(second.organizations.filter((org) => firstIds.has(org.id))).toEqual([]);
    expect(second.organizations[0]?.svcIds[0]?.after).toMatch(/-R2$/);
    expect(await sandboxDatasetRevisions(sandbox.url)).toEqual([first, second]);
  });

  it('fetches a relisted record by its new svcId only, and a withdrawn record no more', async () => {
    await sandbox.raw('POST', '/admin/reset');
    const report = await reviseSandboxDataset(sandbox.url, { seed: 2, share: 0.01 });
    const fetchV4 = (svcId: string) => sandbox.client.fetchBusinessPartnerV4({ body: { svcId } });
    const relisted = report.organizations.find((org) => org.kind === 'relisted')?.svcIds[0];
    const withdrawn = report.organizations.find((org) => org.kind === 'withdrawn')?.svcIds[0];
    expect(await fetchV4(relisted?.after ?? '')).toMatchObject({
      status: { code: 'OK' },
      svcId: relisted?.after,
    });
    expect(await fetchV4(relisted?.before ?? '')).toMatchObject({ status: { code: 'INVALID_INPUT' } });
    expect(await fetchV4(withdrawn?.before ?? '')).toMatchObject({ status: { code: 'INVALID_INPUT' } });
    await sandbox.raw('POST', '/admin/reset');
    expect(await fetchV4(relisted?.before ?? '')).toMatchObject({
      status: { code: 'OK' },
      svcId: relisted?.before,
    });
  });

  it('is undone by POST /admin/reset: lookups answer as before the revision', async () => {
    await sandbox.raw('POST', '/admin/reset');
    const before = await lookUp(sandbox);
    await reviseSandboxDataset(sandbox.url, { seed: 5, share: 0.2 });
    expect(await lookUp(sandbox)).not.toEqual(before);
    await sandbox.raw('POST', '/admin/reset');
    expect(await lookUp(sandbox)).toEqual(before);
    expect(await sandboxDatasetRevisions(sandbox.url)).toEqual([]);
  });

  it('in instant mode, a revision reaches lookups whose outcomes were cached before it', async () => {
    const before = await lookUp(instant);
    const report = await reviseSandboxDataset(instant.url, { seed: 5, share: 0.2, kinds: ['relisted'] });
    const after = await lookUp(instant);
    const revised = revisedBySvcId(report);
    const relistedMatches = [...before].filter(([, was]) => revised.has(was.values?.[0]?.svcId ?? ''));
    expect(relistedMatches.length).toBeGreaterThan(0);
    for (const [taskId, was] of relistedMatches)
      expect(after.get(taskId)?.values?.[0]?.svcId).toBe(revised.get(was.values?.[0]?.svcId ?? '')?.after);
  });

  it.each([
    [{ share: 0.1 }, 'body.seed'],
    [{ seed: 1.5, share: 0.1 }, 'body.seed'],
    [{ seed: 1 }, 'body.share'],
    [{ seed: 1, share: 0 }, 'body.share'],
    [{ seed: 1, share: 1.5 }, 'body.share'],
    [{ seed: 1, share: 0.1, kinds: [] }, 'body.kinds'],
    [{ seed: 1, share: 0.1, kinds: ['renamed'] }, 'body.kinds.0'],
    [{ seed: 1, share: 0.1, kinds: ['withdrawn', 'withdrawn'] }, 'body.kinds'],
    [{ seed: 1, share: 0.1, count: 3 }, 'body'],
    [[1, 2], 'body'],
  ])('refuses %j with a 400 naming %s, revising nothing', async (body, field) => {
    await sandbox.raw('POST', '/admin/reset');
    const answer = await revise(sandbox, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'INVALID_REQUEST', field });
    expect(answer.body.message).toEqual(expect.any(String));
    expect(await sandboxDatasetRevisions(sandbox.url)).toEqual([]);
  });
});

describe('acrossMatchThreshold', () => {
  const thresholds = { fullMatch: 0.8, maybeMatch: 0.6 };

  it('moves MATCH scores down into the MAYBE_MATCH band, keeping their order', () => {
    expect(acrossMatchThreshold(0.9, thresholds, 'down')).toBeCloseTo(0.75, 10);
    expect(acrossMatchThreshold(0.8, thresholds, 'down')).toBeCloseTo(0.7, 10);
    expect(acrossMatchThreshold(0.7, thresholds, 'down')).toBeCloseTo(0.65, 10);
    expect(acrossMatchThreshold(1, thresholds, 'down')).toBeCloseTo(0.7999, 10);
  });

  it('moves MAYBE_MATCH scores up into MATCH, keeping their order', () => {
    expect(acrossMatchThreshold(0.6, thresholds, 'up')).toBeCloseTo(0.8, 10);
    expect(acrossMatchThreshold(0.7, thresholds, 'up')).toBeCloseTo(0.9, 10);
    expect(acrossMatchThreshold(0.9, thresholds, 'up')).toBe(0.9);
  });

  it('leaves NO_MATCH scores, and every score when the thresholds leave no MAYBE_MATCH band', () => {
    expect(acrossMatchThreshold(0.55, thresholds, 'down')).toBe(0.55);
    expect(acrossMatchThreshold(0.55, thresholds, 'up')).toBe(0.55);
    expect(acrossMatchThreshold(0.9, { fullMatch: 0.7, maybeMatch: 0.7 }, 'down')).toBe(0.9);
  });
});
