// Everything the sandbox remembers, in one place: the generated dataset and the services over
// it (fixed for the sandbox's life), and the stores requests change (reset by POST /admin/reset),
// revisions of the dataset among them.

import type { Schemas } from '../../refdata/index.ts';
import { generateDataset, type SandboxDataset } from '../dataset/dataset.ts';
import { FetchResults } from '../directory/fetch-results.ts';
import { StorageCatalog } from '../directory/storages.ts';
import { BulkLookupRunner } from '../lookup/bulk-runner.ts';
import { LookupService } from '../lookup/lookup-service.ts';
import { TaskOutcomes } from '../lookup/task-outcomes.ts';
import type { ResolvedSandboxOptions } from '../options.ts';
import { BulkLookupStore } from './bulk-lookups.ts';
import { ConfigurationStore } from './configuration-store.ts';
import {
  DatasetRevisions,
  type DatasetRevisionReport,
  type DatasetRevisionSpec,
} from './dataset-revisions.ts';
import { Faults } from './faults.ts';
import { JobStore, type EventStoreJobRecord, type ExtdLookupJobRecord } from './jobs.ts';
import { QuotaLedger } from './quota-ledger.ts';
import {
  SEEDED_FETCH_CONFIGURATIONS,
  SEEDED_LOOKUP_CONFIGURATIONS,
  seedConfigurations,
} from './seed-configurations.ts';
import { SandboxStats } from './stats.ts';
import { SupplierGatewayStore } from './supplier-gateway.ts';
import { TokenStore } from './token-store.ts';

// Generating the dataset and its match index takes seconds for large sizes; sandboxes with the
// same size and seed (tests start many) share one, as it is read-only.
const datasets = new Map<string, SandboxDataset>();
const MAX_SHARED_DATASETS = 2;

function sharedDataset(organizations: number, seed: number): SandboxDataset {
  const key = `${organizations}:${seed}`;
  let dataset = datasets.get(key);
  if (!dataset) {
    dataset = generateDataset({ organizations, seed });
    if (datasets.size >= MAX_SHARED_DATASETS) datasets.delete(datasets.keys().next().value ?? '');
    datasets.set(key, dataset);
  }
  return dataset;
}

export class SandboxState {
  readonly dataset: SandboxDataset;
  readonly revisions: DatasetRevisions;
  readonly lookups: LookupService;
  readonly fetchResults: FetchResults;
  readonly storages: StorageCatalog;

  readonly stats = new SandboxStats();
  readonly faults: Faults;
  readonly tokens: TokenStore;
  readonly quotas: QuotaLedger;
  readonly configurations: {
    fetch: ConfigurationStore<Schemas['FetchConfigurationModel']>;
    lookup: ConfigurationStore<Schemas['LookupConfigurationModel']>;
  };
  readonly bulks = new BulkLookupStore();
  readonly bulkRunner: BulkLookupRunner;
  readonly extdJobs = new JobStore<ExtdLookupJobRecord>();
  readonly eventStoreJobs = new JobStore<EventStoreJobRecord>();
  readonly supplierGateway = new SupplierGatewayStore();
  readonly #taskOutcomes: TaskOutcomes;

  constructor(options: Readonly<ResolvedSandboxOptions>) {
    const { clock } = options;
    this.dataset = sharedDataset(options.orgs, options.seed);
    this.revisions = new DatasetRevisions(this.dataset);
    this.lookups = new LookupService(this.dataset, this.revisions);
    this.fetchResults = new FetchResults(this.dataset, this.revisions, () => clock.now());
    this.storages = new StorageCatalog(this.dataset);
    this.faults = new Faults(options.faults, options.seed);
    this.tokens = new TokenStore(clock, options.tokenLifetimeSeconds);
    this.quotas = new QuotaLedger(clock);
    this.configurations = { fetch: new ConfigurationStore(clock), lookup: new ConfigurationStore(clock) };
    this.#taskOutcomes = new TaskOutcomes(this.lookups, this.faults, this.stats, {
      cache: options.mode === 'instant',
    });
    this.bulkRunner = new BulkLookupRunner({
      clock,
      tasksPerTurn: options.bulkTasksPerTurn,
      outcomeOf: (task, parameters, timestamp) => this.#taskOutcomes.outcomeOf(task, parameters, timestamp),
      frozen: () => this.faults.settings.frozen,
      unfrozen: () => this.faults.unfrozen(),
    });
    this.#seed();
  }

  /** Changes the matching data of some organizations; see DatasetRevisions. */
  reviseDataset(request: DatasetRevisionSpec): DatasetRevisionReport {
    const report = this.revisions.revise(request);
    // Outcomes cached in instant mode were looked up in the dataset before this revision.
    this.#taskOutcomes.clear();
    return report;
  }

  /**
   * Back to the state at start: the dataset unrevised; no tokens, bulks, jobs, quotas or
   * suppliers; seeded configurations; zero counters.
   */
  reset(): void {
    this.bulkRunner.stop();
    this.stats.reset();
    this.faults.reset();
    this.tokens.clear();
    this.quotas.clear();
    this.configurations.fetch.clear();
    this.configurations.lookup.clear();
    this.bulks.clear();
    this.extdJobs.clear();
    this.eventStoreJobs.clear();
    this.supplierGateway.clear();
    this.revisions.clear();
    this.#taskOutcomes.clear();
    this.#seed();
  }

  /** Stops background work so the process can exit. */
  close(): void {
    this.bulkRunner.stop();
  }

  #seed(): void {
    seedConfigurations(this.configurations.fetch, SEEDED_FETCH_CONFIGURATIONS);
    seedConfigurations(this.configurations.lookup, SEEDED_LOOKUP_CONFIGURATIONS);
  }
}
