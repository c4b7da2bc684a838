// The summary of a run: one row per headline figure, with its target where the issue set one.
import type { BrokerLimitResult } from '../broker/limit.ts';
import type { LatencyResult } from '../pipeline/latency.ts';
import type { MemoryResult } from '../pipeline/memory.ts';
import type { NaiveClientResult } from '../pipeline/naive-client.ts';
import type { OverheadResult } from '../pipeline/overhead.ts';
import type { QuotaResult } from '../pipeline/quota.ts';
import type { RerunResult } from '../pipeline/rerun.ts';
import type { RegimeResult, ScaleResult } from '../pipeline/scale.ts';
import type { StateResult } from '../pipeline/state.ts';
import type { Machine } from './machine.ts';
import type { MatchingRuns } from './matching-runs.ts';
import { formatSpread, type Spread } from './stats.ts';

export interface Results {
  matching?: MatchingRuns;
  overhead?: OverheadResult;
  naive?: NaiveClientResult;
  quota?: QuotaResult;
  memory?: MemoryResult;
  broker?: BrokerLimitResult;
  latency?: LatencyResult;
  state?: StateResult;
  rerun?: RerunResult;
  scale?: ScaleResult;
}

export interface Row {
  benchmark: string;
  figure: string;
  value: string;
  target: string;
  met: string;
}

const yes = (ok: boolean) => (ok ? 'met' : 'missed');
const row = (benchmark: string, figure: string, value: string, target = '', met = ''): Row => ({
  benchmark,
  figure,
  value,
  target,
  met,
});
const rate = (s: Spread) => formatSpread(s, '/s');
const times = (s: Spread) => `${formatSpread(s)}x`;
const percent = (s: Spread) =>
  `${(s.median * 100).toFixed(1)}% (${(s.min * 100).toFixed(1)}-${(s.max * 100).toFixed(1)}%)`;

export function summaryRows(results: Results): Row[] {
  const rows: Row[] = [];
  const {
    matching: m,
    overhead: o,
    naive: n,
    quota: q,
    memory: mem,
    broker: b,
    latency: l,
    state: s,
    rerun: r,
    scale: sc,
  } = results;
  if (m) {
    rows.push(
      row(
        'matching',
        `precision at ${m.first.threshold}, ${m.organizations} organizations`,
        percent(m.precision),
      ),
    );
    rows.push(row('matching', 'recall', percent(m.recall)));
    rows.push(row('matching', 'lookups/s per core', formatSpread(m.lookupsPerSecondPerCore)));
  }
  if (o) {
    rows.push(row('overhead', `partner-enrich, ${o.records} records`, rate(o.pipeline)));
    rows.push(row('overhead', 'raw kafkajs passthrough', rate(o.raw)));
    rows.push(row('overhead', 'ratio pipeline / raw', times(o.ratio), '>= 0.8x', yes(o.ratio.median >= 0.8)));
    const c = o.cpuPerThousand;
    const ms = (s: Spread | undefined) => s?.median.toFixed(0) ?? 'n/a';
    rows.push(
      row(
        'overhead',
        'CPU ms per 1,000 records: pipeline + sandbox + broker',
        `${ms(c.pipeline)} + ${ms(c.sandbox)} + ${ms(c.brokerForPipeline)}`,
      ),
    );
    rows.push(
      row('overhead', 'CPU ms per 1,000 records: raw + broker', `${ms(c.raw)} + ${ms(c.brokerForRaw)}`),
    );
    rows.push(row('overhead', 'partner-enrich exactly-once', rate(o.exactlyOnce)));
    rows.push(
      row(
        'overhead',
        'ratio exactly-once / at-least-once',
        times(o.exactlyOnceRatio),
        '~0.6x (anchor)',
        yes(o.exactlyOnceRatio.median >= 0.6),
      ),
    );
    rows.push(
      row(
        'overhead',
        'CPU ms per 1,000 records: exactly-once + sandbox + broker',
        `${ms(c.exactlyOnce)} + ${ms(c.sandboxForExactlyOnce)} + ${ms(c.brokerForExactlyOnce)}`,
      ),
    );
    if (c.pipelineV8Helpers && c.exactlyOnceV8Helpers && c.rawV8Helpers) {
      rows.push(
        row(
          'overhead',
          "of which on V8's helper threads (GC, compilers): pipeline; exactly-once; raw",
          `${ms(c.pipelineV8Helpers)}; ${ms(c.exactlyOnceV8Helpers)}; ${ms(c.rawV8Helpers)}`,
        ),
      );
    }
    rows.push(
      row(
        'overhead',
        'exactly-once MatchResults read_committed',
        formatSpread(o.exactlyOnceMatches),
        String(o.records),
        yes(o.exactlyOnceMatches.min === o.records && o.exactlyOnceMatches.max === o.records),
      ),
    );
  }
  if (n) {
    rows.push(row('naive', `partner-enrich at ${n.latencyMs} ms/request`, rate(n.pipeline)));
    rows.push(row('naive', 'per-record v4, concurrency 16', rate(n.concurrent)));
    rows.push(row('naive', `per-record v4, serial (first ${n.serialSample})`, rate(n.serial)));
    rows.push(row('naive', 'ratio vs serial', times(n.vsSerial), '>= 50x', yes(n.vsSerial.median >= 50)));
    rows.push(
      row(
        'naive',
        'ratio vs concurrency 16',
        times(n.vsConcurrent),
        '>= 5x',
        yes(n.vsConcurrent.median >= 5),
      ),
    );
  }
  if (q) {
    const quota = `Q = ${q.quota} per ${q.windowMs / 1000} s`;
    rows.push(
      row(
        'quota',
        `share of Q used per full window, ${quota}`,
        percent(q.windowUse),
        '>= 98%',
        yes(q.windowUse.median >= 0.98),
      ),
    );
    rows.push(row('quota', 'OVER_LIMIT answers per window', formatSpread(q.overLimitPerWindow)));
    rows.push(
      row(
        'quota',
        'records lost',
        formatSpread(q.lost),
        '0',
        yes(q.lost.max === 0 && q.dedup.lost.max === 0),
      ),
    );
    rows.push(
      row(
        'quota',
        `units per changed record (${q.dedup.records} records, ${q.dedup.changes} changes)`,
        formatSpread(q.dedup.unitsPerChange),
      ),
    );
    rows.push(row('quota', 'units per input record', formatSpread(q.dedup.unitsPerRecord)));
  }
  if (mem) {
    const drained =
      mem.drained === mem.backlog ? `all ${mem.backlog}` : `first ${mem.drained} of ${mem.backlog}`;
    rows.push(
      row(
        'memory',
        `peak RSS draining ${drained}`,
        formatSpread(mem.peakRssMb, ' MB'),
        '<= 256 MB',
        yes(mem.peakRssMb.median <= 256),
      ),
    );
    rows.push(row('memory', 'heap reachable after the drain', formatSpread(mem.liveHeapAtEndMb, ' MB')));
    rows.push(row('memory', 'records/s while draining', formatSpread(mem.recordsPerSecond)));
  }
  if (b) {
    rows.push(row('broker', `ProducerPerformance (${b.recordBytes} B, acks=all)`, rate(b.produce)));
    rows.push(row('broker', 'ConsumerPerformance', rate(b.consume)));
    if (o) {
      rows.push(
        row(
          'broker',
          'partner-enrich / broker produce limit',
          `${((o.pipeline.median / b.produce.median) * 100).toFixed(1)}%`,
        ),
      );
      rows.push(
        row(
          'broker',
          'raw passthrough / broker produce limit',
          `${((o.raw.median / b.produce.median) * 100).toFixed(1)}%`,
        ),
      );
    }
  }
  if (l) {
    const load =
      l.maximum?.source === 'drain'
        ? `${l.rate} records/s (half the max of drains of its own)`
        : `${l.rate} records/s`;
    rows.push(row('latency', `p50 at ${load}`, formatSpread(l.p50, ' ms')));
    rows.push(row('latency', 'p95', formatSpread(l.p95, ' ms')));
    rows.push(row('latency', 'p99', formatSpread(l.p99, ' ms')));
    if (l.cpuBusy && l.cpuPerRecordUs) {
      rows.push(
        row(
          'latency',
          'pipeline CPU under the load: share of a core; per record',
          `${percent(l.cpuBusy)}; ${formatSpread(l.cpuPerRecordUs, ' µs')}`,
        ),
      );
    }
    const e = l.exactlyOnce;
    rows.push(row('latency', `exactly-once p50 at ${l.rate} records/s`, formatSpread(e.p50, ' ms')));
    rows.push(row('latency', 'exactly-once p95', formatSpread(e.p95, ' ms')));
    rows.push(row('latency', 'exactly-once p99', formatSpread(e.p99, ' ms')));
    const r = l.exactlyOnceRatio;
    rows.push(
      row(
        'latency',
        'ratio exactly-once / at-least-once: p50, p95, p99',
        [r.p50, r.p95, r.p99].map(times).join(', '),
      ),
    );
    if (l.warmup) {
      const w = l.warmup;
      rows.push(
        row(
          'latency',
          'warm-up pair, not counted (broker new to the load): p99, exactly-once p99',
          `${w.atLeastOnce.p99} ms, ${w.exactlyOnce.p99} ms`,
        ),
      );
    }
  }
  if (s) {
    const partners = s.partners.toLocaleString('en-US');
    rows.push(
      row(
        'state',
        `time to ready, warm store, ${partners} partners`,
        formatSpread(s.warmReadySeconds, ' s'),
        '<= 5 s',
        yes(s.warmReadySeconds.median <= 5),
      ),
    );
    rows.push(row('state', 'records restored on the warm start', formatSpread(s.warmRestoredRecords)));
    rows.push(row('state', 'time to ready from an empty disk', formatSpread(s.coldReadySeconds, ' s')));
    rows.push(row('state', 'restore rate from an empty disk', rate(s.restoreRate)));
    rows.push(row('state', 'plain kafkajs consumer, same topic', rate(s.rawRate)));
    rows.push(row('state', 'ratio restore / plain consumer', times(s.restoreVsRaw)));
    rows.push(
      row(
        'state',
        'peak RSS during restore from an empty disk',
        formatSpread(s.coldPeakRssMb, ' MB'),
        '<= 256 MB',
        yes(s.coldPeakRssMb.median <= 256),
      ),
    );
  }
  if (r) rows.push(...rerunRows(r));
  if (sc) rows.push(...scaleRows(sc));
  return rows;
}

function rerunRows(r: RerunResult): Row[] {
  const ms = (s: Spread) => formatSpread(s, ' ms');
  const load = `${r.liveRate} records/s, Q = ${r.quota} per ${r.windowMs / 1000} s`;
  return [
    row('rerun', `live p95 without a rerun, ${load}`, ms(r.baselineP95)),
    row('rerun', `live p95 beside a ${r.partners}-partner rerun`, ms(r.besideP95)),
    row(
      'rerun',
      'live p95 ratio beside / without',
      times(r.p95Ratio),
      '<= 1.5x',
      yes(r.p95Ratio.median <= 1.5),
    ),
    row('rerun', `rerun throughput (quota share ${r.quotaShare})`, rate(r.rerunPartnersPerSecond)),
    row(
      'rerun',
      'share of Q used per full window beside the rerun: mean, windows >= 98%',
      `${(r.besideWindowMean * 100).toFixed(1)}%, ${r.besideWindowsFull.full} of ${r.besideWindowsFull.of}`,
      'every window',
      yes(r.besideWindowsFull.full === r.besideWindowsFull.of),
    ),
    row(
      'rerun',
      `live records delayed past one window (${r.windowMs} ms)`,
      formatSpread(r.pastWindow),
      '0',
      yes(r.pastWindow.max === 0),
    ),
  ];
}

function scaleRows(s: ScaleResult): Row[] {
  const us = (spread: Spread) => formatSpread(spread, ' µs');
  const regime = (r: RegimeResult, bound: string, ratio: Row) => [
    row('scale', `1 replica, ${bound}`, rate(r.one)),
    row('scale', '2 replicas in one group', rate(r.two)),
    ratio,
    row(
      'scale',
      'CPU busy share: 1 replica; the busier of 2',
      `${percent(r.busyOne)}; ${percent(r.busyTwo)}`,
    ),
    row(
      'scale',
      'CPU per record: 1 replica; 2 replicas',
      `${us(r.cpuUsPerRecordOne)}; ${us(r.cpuUsPerRecordTwo)}`,
    ),
  ];
  const { latencyBound: l, cpuBound: c } = s;
  return [
    ...regime(
      l,
      `${s.records} records, ${s.partitions} partitions, ${l.latencyMs} ms/request (bound by bulks in flight)`,
      row('scale', 'ratio 2 / 1 replicas', times(l.ratio), '>= 1.7x', yes(l.ratio.median >= 1.7)),
    ),
    ...regime(
      c,
      'instant sandbox (CPU-bound, 2 cores shared)',
      row('scale', 'ratio 2 / 1 replicas, CPU-bound', times(c.ratio)),
    ),
  ];
}

export function markdownTable(rows: Row[]): string {
  const lines = [
    '| benchmark | figure | median (min-max) | target | |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.benchmark} | ${r.figure} | ${r.value} | ${r.target} | ${r.met} |`),
  ];
  return lines.join('\n');
}

export function textTable(rows: Row[]): string {
  const widths = [10, 58, 30, 10];
  return rows
    .map((r) =>
      [r.benchmark, r.figure, r.value, r.target, r.met]
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join(' '),
    )
    .join('\n');
}

export function machineLine(machine: Machine): string {
  const kafka = machine.kafka === 'none' ? 'no Kafka broker' : `Kafka ${machine.kafka}`;
  return `${machine.cores} x ${machine.cpu}, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}, ${machine.java}, ${kafka}`;
}
