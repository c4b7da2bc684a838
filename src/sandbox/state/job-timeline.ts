// Where a job stands is computed from the clock rather than advanced by timers: a job waits
// `startDelayMs` in CREATED, runs `runMs` (RUNNING, progress rising to 100) and is FINISHED;
// a job chosen to die stops half-way with DIED. Tests move an injected clock and read the
// states in order; with the system clock the job simply takes that long.

export interface JobTimeline {
  createdAt: number;
  startDelayMs: number;
  runMs: number;
  /** Progress (0..100) at which the job dies; undefined for a job that finishes. */
  diesAtProgress: number | undefined;
}

export type JobPhase = 'CREATED' | 'RUNNING' | 'FINISHED' | 'DIED';

export interface JobState {
  phase: JobPhase;
  /** 0..100 */
  progress: number;
  /** When the job last changed phase or progress. */
  modifiedAt: number;
}

export function jobStateAt(timeline: JobTimeline, now: number): JobState {
  const { createdAt, startDelayMs, runMs, diesAtProgress } = timeline;
  const startedAt = createdAt + startDelayMs;
  if (now < startedAt) return { phase: 'CREATED', progress: 0, modifiedAt: createdAt };
  const share = runMs === 0 ? 1 : Math.min(1, (now - startedAt) / runMs);
  const progress = Math.floor(share * 100);
  if (diesAtProgress !== undefined && progress >= diesAtProgress) {
    return {
      phase: 'DIED',
      progress: diesAtProgress,
      modifiedAt: startedAt + (runMs * diesAtProgress) / 100,
    };
  }
  if (share >= 1) return { phase: 'FINISHED', progress: 100, modifiedAt: startedAt + runMs };
  return { phase: 'RUNNING', progress, modifiedAt: now };
}

/** How long a realistic job stays CREATED before it runs. */
const JOB_START_DELAY_MS = 1_000;
/** Where a job chosen to die stops. */
const JOB_DEATH_PROGRESS = 50;

export interface JobPlan {
  createdAt: number;
  partners: number;
  instant: boolean;
  msPerPartner: number;
  dies: boolean;
}

/** Instant jobs end when created; realistic ones wait, then take msPerPartner per partner. */
export function planJob(plan: JobPlan): JobTimeline {
  return {
    createdAt: plan.createdAt,
    startDelayMs: plan.instant ? 0 : JOB_START_DELAY_MS,
    runMs: plan.instant ? 0 : Math.max(1, plan.partners) * plan.msPerPartner,
    diesAtProgress: plan.dies ? JOB_DEATH_PROGRESS : undefined,
  };
}
