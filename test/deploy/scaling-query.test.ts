// The ScaledObject's Prometheus query evaluated by Prometheus's engine on the series two
// replicas would export: the lag while intake runs, and the replicas held (the autoscaler's
// desired count unchanged) while intake is paused for quota.
import { join } from 'node:path';
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectValues, SCRAPE_SECONDS, type Series } from './support/promql-eval.ts';
import { fetchPromtool } from './support/promtool.ts';
import { renderKustomization } from './support/kustomize.ts';

const objects = renderKustomization(
  join(new URL('../../deploy/kubernetes/', import.meta.url).pathname, 'overlays/production'),
);
const scaled = objects.find((object) => object.kind === 'ScaledObject') as unknown as IScaledObject;
const trigger = scaled.spec?.triggers[0];
const query = trigger?.metadata['query'] ?? '';
const threshold = Number(trigger?.metadata['threshold']);
const job = objects.find((object) => object.kind === 'Service')?.metadata.name ?? '';
const topic = (objects.find((object) => object.kind === 'ConfigMap')?.['data'] as Record<string, string>)[
  'PARTNER_ENRICH_TOPICS__INPUT'
];

const REPLICAS = ['a', 'b'];
const PARTITIONS = ['0', '1'];
const MINUTES = 40;
const samples = Array.from(
  { length: (MINUTES * 60) / SCRAPE_SECONDS + 1 },
  (_, i) => (i * SCRAPE_SECONDS) / 60,
);

interface Timeline {
  /** Lag of each input partition, as every replica reports it (each reports the whole group's). */
  lag: (minute: number) => number;
  /** Why intake is paused at the minute, if it is. */
  pausedFor: (minute: number) => 'quota' | 'backpressure' | undefined;
  /** Whether bulks are being submitted at the minute. */
  submitting: (minute: number) => boolean;
  /**
   * The pods scraped at the minute and whether each answers /readyz 200; unset: the two
   * replicas, ready throughout.
   */
  pods?: (minute: number) => Record<string, 'ready' | 'unready'>;
}

/** A counter that counts the samples at which `counts` holds. */
const counter = (counts: (minute: number, index: number) => boolean): number[] => {
  let total = 0;
  return samples.map((minute, index) => (total += counts(minute, index) ? 1 : 0));
};

const steadyPods = (): Record<string, 'ready' | 'unready'> =>
  Object.fromEntries(REPLICAS.map((instance) => [instance, 'ready' as const]));

/** The series the pods export over the timeline, as the ServiceMonitor scrapes them. */
function seriesOf(timeline: Timeline): Series[] {
  const pauseBegins = (reason: string) =>
    counter(
      (minute, index) =>
        timeline.pausedFor(minute) === reason && timeline.pausedFor(samples[index - 1] ?? -1) !== reason,
    );
  const pods = timeline.pods ?? steadyPods;
  const instances = [...new Set(samples.flatMap((minute) => Object.keys(pods(minute))))];
  return instances.flatMap((instance) => {
    const labels = `job="${job}", instance="${instance}"`;
    // A pod's samples while it is scraped; marked stale once it no longer is, as Prometheus does.
    const scraped = (values: number[]): Series['values'] =>
      values.map((value, index) => {
        if (pods(samples[index] as number)[instance] !== undefined) return value;
        const before = index > 0 ? pods(samples[index - 1] as number)[instance] : undefined;
        return before === undefined ? undefined : 'stale';
      });
    return [
      ...PARTITIONS.map((partition) => ({
        series: `partner_enrich_consumer_lag{${labels}, topic="${topic}", partition="${partition}"}`,
        values: scraped(samples.map(timeline.lag)),
      })),
      // Another topic's lag, which the query must leave out.
      {
        series: `partner_enrich_consumer_lag{${labels}, topic="elsewhere", partition="0"}`,
        values: samples.map(() => 1_000_000),
      },
      {
        series: `partner_enrich_intake_paused{${labels}}`,
        values: scraped(samples.map((minute) => (timeline.pausedFor(minute) ? 1 : 0))),
      },
      ...['quota', 'backpressure'].map((reason) => ({
        series: `partner_enrich_intake_pauses_total{${labels}, reason="${reason}"}`,
        values: scraped(pauseBegins(reason)),
      })),
      {
        series: `partner_enrich_bulk_submissions_total{${labels}}`,
        values: scraped(counter((minute) => timeline.submitting(minute))),
      },
      {
        series: `partner_enrich_ready{${labels}}`,
        values: scraped(samples.map((minute) => (pods(minute)[instance] === 'ready' ? 1 : 0))),
      },
    ];
  });
}

const growingLag = (minute: number) => 10_000 + 2_000 * Math.floor(minute);
/** Desired replicas = value / threshold: the replicas there are. */
const held = REPLICAS.length * threshold;
const lagAt = (minute: number) => PARTITIONS.length * growingLag(minute);

describe("the ScaledObject's query", () => {
  beforeAll(() => fetchPromtool(), 120_000);

  it('is the lag of the input topic, counted once however many replicas report it, while intake runs', () => {
    const series = seriesOf({ lag: growingLag, pausedFor: () => undefined, submitting: () => true });
    expectValues(
      query,
      series,
      [5, 20, 35].map((minute) => [minute, lagAt(minute)]),
    );
    expect(lagAt(35) / threshold).toBeGreaterThan(REPLICAS.length);
  });

  it('holds the replicas during a quota pause and for 5 minutes after it began', () => {
    const pause = (minute: number) => (minute >= 10 && minute < 12 ? 'quota' : undefined);
    const series = seriesOf({ lag: growingLag, pausedFor: pause, submitting: (minute) => !pause(minute) });
    expectValues(query, series, [
      [9, lagAt(9)],
      [10.5, held],
      [11.5, held],
      [13, held],
      [14.5, held],
      [16, lagAt(16)],
    ]);
  });

  it('holds the replicas through a quota window exhausted for 20 minutes', () => {
    const pause = (minute: number) => (minute >= 10 && minute < 30 ? 'quota' : undefined);
    const series = seriesOf({ lag: growingLag, pausedFor: pause, submitting: (minute) => !pause(minute) });
    expectValues(query, series, [
      [12, held],
      [16, held],
      [20, held],
      [29, held],
      [36, lagAt(36)],
    ]);
  });

  it('holds the replicas while short quota windows run out again and again', () => {
    // Each 2-minute window is used up in its first minute; intake waits out the second.
    const pause = (minute: number) => (minute >= 10 && minute % 2 >= 1 ? 'quota' : undefined);
    const series = seriesOf({ lag: growingLag, pausedFor: pause, submitting: (minute) => !pause(minute) });
    expectValues(
      query,
      series,
      [12.25, 15.75, 20.25, 33.25].map((minute) => [minute, held]),
    );
  });

  it('regression: a rolling update during a quota pause counted its new pod and the one stopping as replicas, and the autoscaler added one; now the ready pods are counted', () => {
    // The Deployment's maxSurge 1: a new pod c is scraped from minute 12, restoring (not
    // ready) until 16; then b stops (not ready) and is gone at 17.
    const pods = (minute: number): Record<string, 'ready' | 'unready'> => ({
      a: 'ready',
      ...(minute < 16 ? { b: 'ready' as const } : minute < 17 ? { b: 'unready' as const } : {}),
      ...(minute >= 12 ? { c: minute < 16 ? ('unready' as const) : ('ready' as const) } : {}),
    });
    const series = seriesOf({ lag: growingLag, pausedFor: () => 'quota', submitting: () => false, pods });
    expectValues(
      query,
      series,
      [11, 13, 15, 16.5, 18, 25].map((minute) => [minute, held]),
    );
  });

  it('holds the replicas scraped while a pause finds none ready (the schema registry out)', () => {
    const pods = () => Object.fromEntries(REPLICAS.map((instance) => [instance, 'unready' as const]));
    const series = seriesOf({ lag: growingLag, pausedFor: () => 'quota', submitting: () => false, pods });
    expectValues(
      query,
      series,
      [10, 20].map((minute) => [minute, held]),
    );
  });

  it('is the lag while intake is paused for backpressure and bulks go on being submitted', () => {
    const pause = (minute: number) => (minute >= 10 && minute < 30 ? 'backpressure' : undefined);
    const series = seriesOf({ lag: growingLag, pausedFor: pause, submitting: () => true });
    expectValues(
      query,
      series,
      [12, 20].map((minute) => [minute, lagAt(minute)]),
    );
  });

  it('is checked by an evaluation that fails on a wrong value, or without promtool', () => {
    const series = seriesOf({ lag: growingLag, pausedFor: () => undefined, submitting: () => true });
    expect(() => expectValues(query, series, [[20, held]])).toThrow(
      /FAILED[\s\S]*time: 20m[\s\S]*got: \{\} 1E\+05/,
    );
    expect(() => expectValues(query, series, [[20, lagAt(20)]], '/nonexistent/promtool')).toThrow(
      /\/nonexistent\/promtool not found: PromQL cannot be evaluated without promtool/,
    );
  });
});
