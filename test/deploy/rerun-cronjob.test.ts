// The rerun CronJob of the Kubernetes base (deploy/kubernetes/base): what it runs, and that every
// variable it sets is one the configuration reads, with credentials only from the Secret.
// test/deploy/kubernetes-manifests.test.ts checks the rendered base and overlay as a whole.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.ts';
import { ACCEPTED_ENV_VARS, SECRET_ENV_VARS } from './support/environment.ts';

const manifest = (name: string): unknown =>
  parse(readFileSync(new URL(`../../deploy/kubernetes/base/${name}`, import.meta.url), 'utf8'));

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: unknown };
}
interface Container {
  command?: string[];
  args: string[];
  env: EnvVar[];
  envFrom: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  securityContext: Record<string, unknown>;
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
}
interface CronJob {
  apiVersion: string;
  kind: string;
  spec: {
    schedule: string;
    concurrencyPolicy: string;
    startingDeadlineSeconds: number;
    successfulJobsHistoryLimit: number;
    failedJobsHistoryLimit: number;
    jobTemplate: {
      spec: { template: { spec: { securityContext: Record<string, unknown>; containers: Container[] } } };
    };
  };
}
interface ConfigMap {
  kind: string;
  metadata: { name: string };
  data: Record<string, string>;
}

const cronJob = manifest('rerun-cronjob.yaml') as CronJob;
const configMap = manifest('partner-enrich-configmap.yaml') as ConfigMap;
const pod = cronJob.spec.jobTemplate.spec.template.spec;
const [container] = pod.containers;

describe('deploy/kubernetes/base/rerun-cronjob.yaml', () => {
  it('is a batch/v1 CronJob that never overlaps itself and keeps a bounded history', () => {
    expect(cronJob).toMatchObject({ apiVersion: 'batch/v1', kind: 'CronJob' });
    expect(cronJob.spec.concurrencyPolicy).toBe('Forbid');
    expect(cronJob.spec.startingDeadlineSeconds).toBeGreaterThan(0);
    expect(cronJob.spec.successfulJobsHistoryLimit).toBeGreaterThan(0);
    expect(cronJob.spec.failedJobsHistoryLimit).toBeGreaterThan(0);
    expect(pod.containers).toHaveLength(1);
  });

  it('starts a rerun only when none of the topic is active, and follows it to its end', () => {
    // The image's entry point is the CLI: the arguments are its command line.
    expect(container?.command).toBeUndefined();
    expect(container?.args).toEqual(['rerun', 'start', '--if-idle', '--wait']);
  });

  it('regression: the CronJob held the reference data API key, which `rerun start` never uses; now it sets no variable of its own', () => {
    expect(container?.env).toBeUndefined();
    // As `rerun start` loads it: without the reference data service's credentials.
    const config = loadConfig({ env: configMap.data, serviceCredentials: false });
    expect(config.refdata.apiKey).toBeUndefined();
  });

  it('sets only variables the configuration reads, credentials from the Secret by reference', () => {
    const env = container?.env ?? [];
    for (const variable of env) {
      expect(ACCEPTED_ENV_VARS, variable.name).toContain(variable.name);
      expect(variable.value, `${variable.name} carries no value of its own`).toBeUndefined();
      if (SECRET_ENV_VARS.has(variable.name))
        expect(variable.valueFrom?.secretKeyRef, variable.name).toMatchObject({ name: 'partner-enrich' });
    }
    expect(container?.envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }]);
  });

  it('runs as a non-root user without privileges, within set resources', () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(pod.securityContext['runAsUser']).toBeGreaterThan(0);
    expect(container?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container?.resources.requests).toMatchObject({
      cpu: expect.any(String),
      memory: expect.any(String),
    });
    expect(container?.resources.limits).toMatchObject({ memory: expect.any(String) });
  });
});

describe('deploy/kubernetes/base/partner-enrich-configmap.yaml', () => {
  it('holds only variables the configuration reads, and no credential', () => {
    expect(configMap.kind).toBe('ConfigMap');
    for (const name of Object.keys(configMap.data)) {
      expect(ACCEPTED_ENV_VARS, name).toContain(name);
      expect(SECRET_ENV_VARS, name).not.toContain(name);
    }
  });

  it('is a valid configuration together with the credential the Deployment takes from the Secret', () => {
    const config = loadConfig({
      env: { ...configMap.data, PARTNER_ENRICH_REFDATA__API_KEY: 'from-the-secret' },
    });
    expect(config.topics.input).toBe(configMap.data['PARTNER_ENRICH_TOPICS__INPUT']);
    expect(config.topics.state).toBe(configMap.data['PARTNER_ENRICH_TOPICS__STATE']);
  });
});
