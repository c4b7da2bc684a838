// Every environment variable that docker-compose.yml and the Kubernetes manifests give a
// partner-enrich container is one the configuration loader reads (src/config/env.ts). The
// loader itself ignores an unknown name without `__`, so without this check a misspelt
// variable would silently leave its option at the default.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { describe, expect, it } from 'vitest';
import { parseComposeFile } from './support/compose-schema.ts';
import {
  ACCEPTED_ENV_VARS,
  composeEnvironments,
  kubernetesEnvironments,
  unacceptedEnvVars,
} from './support/environment.ts';
import { renderKustomization, type KubernetesObject } from './support/kustomize.ts';

const composeText = readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8');
const KUBERNETES_DIR = new URL('../../deploy/kubernetes/', import.meta.url).pathname;
const manifests = ['base', 'overlays/production'].map((dir) =>
  renderKustomization(join(KUBERNETES_DIR, dir)),
);

describe('the environment variables of the deployment files', () => {
  it('are all read by the configuration loader, in compose', () => {
    const environments = composeEnvironments(parseComposeFile(composeText));
    expect(environments.flatMap(({ env }) => Object.keys(env)).length).toBeGreaterThan(0);
    expect(unacceptedEnvVars(environments)).toEqual([]);
  });

  it('are all read by the configuration loader, in the Kubernetes base and overlay', () => {
    for (const objects of manifests) {
      const environments = kubernetesEnvironments(objects);
      expect(environments.flatMap(({ env }) => Object.keys(env)).length).toBeGreaterThan(0);
      expect(unacceptedEnvVars(environments)).toEqual([]);
    }
  });

  it('include the conventional shorthands and the file variable as accepted names', () => {
    expect(ACCEPTED_ENV_VARS).toContain('KAFKA_BROKERS');
    expect(ACCEPTED_ENV_VARS).toContain('PARTNER_ENRICH_CONFIG');
    expect(ACCEPTED_ENV_VARS).toContain('PARTNER_ENRICH_OBSERVABILITY__METRICS_PORT');
  });
});

describe('the environment variable check', () => {
  it('rejects a PARTNER_ENRICH_ variable of compose that names no option', () => {
    // One underscore short: the loader would ignore it and use the default brokers.
    const changed = composeText.replace(
      '  PARTNER_ENRICH_KAFKA__BROKERS:',
      '  PARTNER_ENRICH_KAFKA_BROKERS:',
    );
    expect(changed).not.toBe(composeText);
    const problems = unacceptedEnvVars(composeEnvironments(parseComposeFile(changed)));
    expect(problems).toEqual([
      'service topics: PARTNER_ENRICH_KAFKA_BROKERS is not a variable the configuration reads',
      'service run: PARTNER_ENRICH_KAFKA_BROKERS is not a variable the configuration reads',
    ]);
  });

  it('rejects a misspelt ConfigMap key, a renamed option and a whole Secret imported', () => {
    const [base = []] = manifests;
    const objects = structuredClone(base) as KubernetesObject[];
    const configMap = objects.find((object) => object.kind === 'ConfigMap') as unknown as IConfigMap;
    configMap.data = { ...configMap.data, PARTNER_ENRICH_TOPICS__INPUTS: 'partners' };
    const deployment = objects.find((object) => object.kind === 'Deployment') as unknown as IDeployment;
    const container = deployment.spec?.template.spec?.containers[0];
    container?.env?.push({ name: 'PARTNER_ENRICH_REFDATA__URL', value: 'https://refdata.example.com' });
    container?.envFrom?.push({ secretRef: { name: 'partner-enrich' } });
    expect(unacceptedEnvVars(kubernetesEnvironments(objects))).toEqual([
      'Deployment/partner-enrich, container run: imports the whole Secret partner-enrich, whose names cannot be checked',
      'Deployment/partner-enrich, container run: PARTNER_ENRICH_TOPICS__INPUTS is not a variable the configuration reads',
      'Deployment/partner-enrich, container run: PARTNER_ENRICH_REFDATA__URL is not a variable the configuration reads',
      'CronJob/partner-enrich-rerun, container rerun: PARTNER_ENRICH_TOPICS__INPUTS is not a variable the configuration reads',
    ]);
  });
});
