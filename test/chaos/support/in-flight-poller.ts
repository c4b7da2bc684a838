// Samples each running replica's /metrics and keeps the peak of records in flight, read from
// the pipeline's own gauge (partner_enrich_records_in_flight: records taken and not finished,
// as the intake holds them against its cap; records of a partition the member lost stop
// counting, since their new owner reads them again). A peak between two samples can be missed.
export interface InFlightSample {
  at: number;
  port: number;
  inFlight: number;
}

const SAMPLE_EVERY_MS = 200;

function sum(text: string, metric: string, keep: (labels: string) => boolean = () => true): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric)) continue;
    const match = /^(\w+)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match || match[1] !== metric || !keep(match[2] ?? '')) continue;
    total += Number(match[3]);
  }
  return total;
}

/** The pipeline's own count, the one it holds against its cap. */
export function inFlightOf(metricsText: string): number {
  return sum(metricsText, 'partner_enrich_records_in_flight');
}

export class InFlightPoller {
  readonly #ports: () => number[];
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #peak: InFlightSample = { at: 0, port: 0, inFlight: 0 };
  samples = 0;

  constructor(ports: () => number[]) {
    this.#ports = ports;
  }

  get peak(): InFlightSample {
    return this.#peak;
  }

  start(): void {
    const tick = async () => {
      await Promise.all(
        this.#ports().map(async (port) => {
          try {
            const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
              signal: AbortSignal.timeout(1_000),
            });
            if (!response.ok) return;
            const inFlight = inFlightOf(await response.text());
            this.samples += 1;
            if (inFlight > this.#peak.inFlight) this.#peak = { at: Date.now(), port, inFlight };
          } catch {
            // a replica starting, stopping or killed has no metrics endpoint for a moment
          }
        }),
      );
      if (!this.#stopped) this.#timer = setTimeout(() => void tick(), SAMPLE_EVERY_MS);
    };
    void tick();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }
}
