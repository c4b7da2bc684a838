// Saved fetch or lookup configurations with their version history. Every update appends a
// version; a version read returns that version's record as it was written. A deleted
// configuration is gone with all its versions.

import { randomUUID } from 'node:crypto';
import { isoAt, type Clock } from '../clock.ts';

export interface ConfigurationEnvelope<Model> {
  id: string;
  name: string;
  version: number;
  configuration: Model;
  createdAt: string;
  modifiedAt: string;
  createdBy: string;
}

export interface ConfigurationVersion<Model> extends Omit<ConfigurationEnvelope<Model>, 'id'> {
  /** Id of this version; differs from the configuration id. */
  id: string;
  configurationId: string;
  modifiedBy: string;
}

export interface ConfigurationListPage {
  startAfter?: string;
  nextStartAfter?: string;
  total: number;
  values: Omit<ConfigurationEnvelope<unknown>, 'configuration'>[];
}

interface StoredConfiguration<Model> {
  id: string;
  workspaceId: string | undefined;
  isDefault: boolean;
  versions: ConfigurationVersion<Model>[];
}

export interface NewConfiguration<Model> {
  name: string;
  configuration: Model;
  workspaceId?: string | undefined;
  /** Fixed id for configurations seeded at start; a random one otherwise. */
  id?: string;
  /** The default configuration of its type in the workspace (`defaultConfiguration=true`). */
  isDefault?: boolean;
}

export class ConfigurationStore<Model> {
  readonly #clock: Clock;
  readonly #configurations = new Map<string, StoredConfiguration<Model>>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  create(input: NewConfiguration<Model>, user: string): ConfigurationEnvelope<Model> {
    const id = input.id ?? randomUUID();
    const now = isoAt(this.#clock.now());
    const first: ConfigurationVersion<Model> = {
      id: randomUUID(),
      configurationId: id,
      name: input.name,
      version: 1,
      configuration: structuredClone(input.configuration),
      createdAt: now,
      modifiedAt: now,
      createdBy: user,
      modifiedBy: user,
    };
    this.#configurations.set(id, {
      id,
      workspaceId: input.workspaceId,
      isDefault: input.isDefault ?? false,
      versions: [first],
    });
    return envelopeOf(first);
  }

  get(id: string): ConfigurationEnvelope<Model> | undefined {
    const latest = this.#configurations.get(id)?.versions.at(-1);
    return latest && envelopeOf(latest);
  }

  version(id: string, version: number): ConfigurationVersion<Model> | undefined {
    const found = this.#configurations.get(id)?.versions.find((entry) => entry.version === version);
    return found && structuredClone(found);
  }

  /** Appends a version; members left out keep the previous version's value. */
  update(
    id: string,
    change: { name?: string | undefined; configuration?: Model | undefined },
    user: string,
  ): ConfigurationEnvelope<Model> | undefined {
    const stored = this.#configurations.get(id);
    const latest = stored?.versions.at(-1);
    if (!stored || !latest) return undefined;
    const next: ConfigurationVersion<Model> = {
      ...latest,
      id: randomUUID(),
      name: change.name ?? latest.name,
      version: latest.version + 1,
      configuration: structuredClone(change.configuration ?? latest.configuration),
      modifiedAt: isoAt(this.#clock.now()),
      modifiedBy: user,
    };
    stored.versions.push(next);
    return envelopeOf(next);
  }

  delete(id: string): ConfigurationEnvelope<Model> | undefined {
    const deleted = this.get(id);
    this.#configurations.delete(id);
    return deleted;
  }

  /**
   * Cursor page in creation order; the cursor is the last id of the previous page. Undefined
   * for a cursor that names no configuration (restarting from the top could loop forever).
   */
  list(query: {
    startAfter?: string | undefined;
    limit: number;
    defaultConfiguration?: boolean | undefined;
  }): ConfigurationListPage | undefined {
    const all = [...this.#configurations.values()].filter(
      (stored) => query.defaultConfiguration !== true || stored.isDefault,
    );
    const cursorAt =
      query.startAfter === undefined ? -1 : all.findIndex((stored) => stored.id === query.startAfter);
    if (query.startAfter !== undefined && cursorAt < 0) return undefined;
    const from = cursorAt + 1;
    const slice = all.slice(from, from + query.limit);
    const page: ConfigurationListPage = {
      total: all.length,
      values: slice.flatMap((stored) => {
        const latest = stored.versions.at(-1);
        if (!latest) return [];
        const { configuration: _configuration, ...summary } = envelopeOf(latest);
        return [summary];
      }),
    };
    if (query.startAfter !== undefined) page.startAfter = query.startAfter;
    const last = slice.at(-1);
    if (last && from + slice.length < all.length) page.nextStartAfter = last.id;
    return page;
  }

  clear(): void {
    this.#configurations.clear();
  }
}

function envelopeOf<Model>(version: ConfigurationVersion<Model>): ConfigurationEnvelope<Model> {
  return {
    id: version.configurationId,
    name: version.name,
    version: version.version,
    configuration: structuredClone(version.configuration),
    createdAt: version.createdAt,
    modifiedAt: version.modifiedAt,
    createdBy: version.createdBy,
  };
}
