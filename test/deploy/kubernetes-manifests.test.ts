// deploy/kubernetes as `kubectl apply -k` sends it: every object of the base and of the
// production overlay valid against its kind's schema (Kubernetes, KEDA, Prometheus Operator),
// and the objects agreeing with each other and with the configuration they run with.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { ICronJob } from 'kubernetes-models/batch/v1/CronJob';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IService } from 'kubernetes-models/v1/Service';
import { loadConfig } from '../../src/config/index.ts';
import { PIPELINE_METRIC_NAMES } from '../observability/metric-names.ts';
import { kubernetesEnvironments, podSpecOf, SECRET_ENV_VARS } from './support/environment.ts';
import { allSchemaProblems } from './support/kubernetes-schemas.ts';
import { renderKustomization, type KubernetesObject } from './support/kustomize.ts';

const KUBERNETES_DIR = new URL('../../deploy/kubernetes/', import.meta.url).pathname;
const KUSTOMIZATIONS = ['base', 'overlays/production'];

const rendered = new Map(KUSTOMIZATIONS.map((dir) => [dir, renderKustomization(join(KUBERNETES_DIR, dir))]));

/** A copy of deploy/kubernetes with one file changed, rendered like the real one. */
const scratchDirs: string[] = [];
function renderWithChange(file: string, change: (text: string) => string): KubernetesObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'partner-enrich-kustomize-'));
  scratchDirs.push(dir);
  cpSync(KUBERNETES_DIR, dir, { recursive: true });
  const path = join(dir, file);
  const text = readFileSync(path, 'utf8');
  const changed = change(text);
  expect(changed, `the planted mistake changes ${file}`).not.toBe(text);
  writeFileSync(path, changed);
  return renderKustomization(join(dir, 'base'));
}
afterAll(() => {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

/** The one object of the kind, typed as its schema describes it. */
function ofKind<T>(objects: KubernetesObject[], kind: string): T {
  const found = objects.filter((object) => object.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0] as unknown as T;
}

/** Whether a label selector picks the labels; an empty one would pick every pod, so it does not count. */
const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  Object.keys(selector ?? {}).length > 0 &&
  Object.entries(selector ?? {}).every(([key, value]) => labels?.[key] === value);

/** Bytes of a Kubernetes memory quantity such as 384Mi or 1G. */
function bytes(quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(quantity);
  if (!match) throw new Error(`not a memory quantity this test reads: ${quantity}`);
  const units: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, k: 1e3, M: 1e6, G: 1e9 };
  return Number(match[1]) * (units[match[2] ?? ''] ?? 1);
}

describe.each(KUSTOMIZATIONS)('deploy/kubernetes/%s', (dir) => {
  const objects = rendered.get(dir) ?? [];
  const deployment = ofKind<IDeployment>(objects, 'Deployment');
  const pod = deployment.spec?.template.spec;
  const container = pod?.containers[0];
  const configMap = ofKind<IConfigMap>(objects, 'ConfigMap');
  const service = ofKind<IService>(objects, 'Service');
  // What the replicas run with: the ConfigMap, and placeholders for the Secret's keys.
  const replicaEnvironment = kubernetesEnvironments(objects).find(({ where }) =>
    where.startsWith('Deployment/'),
  );
  const config = loadConfig({ env: replicaEnvironment?.env ?? {} });

  it('renders the objects of an installation, every one valid against the schema of its kind', async () => {
    expect(objects.map((object) => object.kind).sort()).toEqual([
      'ConfigMap',
      'CronJob',
      'Deployment',
      'PodDisruptionBudget',
      'ScaledObject',
      'Service',
      'ServiceMonitor',
    ]);
    expect(await allSchemaProblems(objects)).toEqual([]);
  });

  it('probes /healthz for liveness and /readyz for readiness on the port the configuration serves', () => {
    const port = container?.ports?.find((candidate) => candidate.name === 'metrics');
    expect(port?.containerPort).toBe(config.observability.metricsPort);
    expect(config.observability.metricsHost).toBe('0.0.0.0');
    expect(container?.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    // `run` serves /healthz from its first moments (docs/DEPLOYMENT.md): nothing for a startup probe to wait for.
    expect(container?.startupProbe).toBeUndefined();
    expect(container?.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(container?.args).toEqual(['run']);
  });

  it('asks for more memory than the benchmark peak and gives the SIGKILL time after the grace period', () => {
    // docs/BENCHMARKS.md: 255 MB peak RSS draining 1,000,000 records with the runtime's flags.
    const request = bytes(String(container?.resources?.requests?.['memory']));
    expect(request).toBeGreaterThan(255e6 * 1.25);
    expect(bytes(String(container?.resources?.limits?.['memory']))).toBeGreaterThan(request);
    // run exits within shutdown.graceMs + 10 s by itself (src/cli/commands/run.ts).
    expect(pod?.terminationGracePeriodSeconds).toBeGreaterThan(config.shutdown.graceMs / 1000 + 10);
  });

  it('keeps the partner state on a volume of its own, the root file system read-only', () => {
    expect(container?.securityContext?.readOnlyRootFilesystem).toBe(true);
    const mount = container?.volumeMounts?.find((candidate) => candidate.mountPath === config.state.dir);
    expect(mount, `a volume at state.dir ${config.state.dir}`).toBeDefined();
    expect(pod?.volumes?.map((volume) => volume.name)).toContain(mount?.name);
  });

  it('takes every credential from the Secret by reference, and ships no Secret', () => {
    expect(objects.filter((object) => object.kind === 'Secret')).toEqual([]);
    const variables = objects.flatMap(
      (object) => podSpecOf(object)?.containers.flatMap((each) => each.env ?? []) ?? [],
    );
    const credentials = variables.filter((variable) => SECRET_ENV_VARS.has(variable.name));
    expect(credentials.length).toBeGreaterThan(0);
    for (const variable of credentials) {
      expect(variable.value, variable.name).toBeUndefined();
      expect(variable.valueFrom, variable.name).toMatchObject({ secretKeyRef: { name: 'partner-enrich' } });
    }
    expect(Object.keys(configMap.data ?? {}).filter((name) => SECRET_ENV_VARS.has(name))).toEqual([]);
  });

  it('gives every partner-enrich container a configuration that loads', () => {
    const environments = kubernetesEnvironments(objects);
    expect(environments.map(({ where }) => where)).toEqual([
      'Deployment/partner-enrich, container run',
      'CronJob/partner-enrich-rerun, container rerun',
    ]);
    // The CronJob's `rerun start` loads it without the reference data service's credentials.
    for (const { where, env } of environments)
      expect(
        () => loadConfig({ env, serviceCredentials: !where.startsWith('CronJob/') }),
        where,
      ).not.toThrow();
  });

  it("regression: the pods ran as uid 10001, and the image's compile cache (kept per user id, made as the image's user) went unused; now as the image's user", () => {
    const imageUser = /^USER (\d+)/m.exec(
      readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8'),
    )?.[1];
    expect(imageUser).toBeDefined();
    for (const object of objects.filter((candidate) => podSpecOf(candidate) !== undefined))
      expect(podSpecOf(object)?.securityContext?.runAsUser, object.kind).toBe(Number(imageUser));
  });

  it('selects the pipeline pods from the disruption budget, the metrics Service and its monitor', () => {
    const podLabels = deployment.spec?.template.metadata?.labels;
    const budget = ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget');
    expect(selects(budget.spec?.selector?.matchLabels, podLabels)).toBe(true);
    expect(selects(service.spec?.selector, podLabels)).toBe(true);
    expect(service.spec?.ports?.[0]?.targetPort).toBe('metrics');
    const monitor = ofKind<IServiceMonitor>(objects, 'ServiceMonitor');
    expect(selects(monitor.spec.selector.matchLabels, service.metadata?.labels)).toBe(true);
    expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })]);
    // The CronJob's pods are not pipeline replicas: no budget or scrape counts them.
    const rerunPod = ofKind<ICronJob>(objects, 'CronJob').spec?.jobTemplate.spec?.template.metadata;
    expect(selects(service.spec?.selector, rerunPod?.labels)).toBe(false);
  });

  describe('the ScaledObject', () => {
    const scaled = ofKind<IScaledObject>(objects, 'ScaledObject');
    const trigger = scaled.spec?.triggers[0];
    const query = trigger?.metadata['query'] ?? '';

    it('scales the Deployment up to one replica per input partition', () => {
      expect(scaled.spec?.scaleTargetRef.name).toBe(deployment.metadata?.name);
      expect(scaled.spec?.maxReplicaCount).toBe(config.topics.partitions);
      expect(scaled.spec?.minReplicaCount).toBeGreaterThanOrEqual(1);
      expect(scaled.spec?.minReplicaCount).toBeLessThanOrEqual(config.topics.partitions);
    });

    it("queries the pipeline's own metrics of the input topic, scraped through the metrics Service", () => {
      expect(scaled.spec?.triggers).toHaveLength(1);
      expect(trigger?.type).toBe('prometheus');
      const metrics = new Set(query.match(/\bpartner_enrich_\w+/g));
      expect([...metrics].filter((name) => !PIPELINE_METRIC_NAMES.includes(name))).toEqual([]);
      expect(metrics).toContain('partner_enrich_consumer_lag');
      const jobs = new Set([...query.matchAll(/job="([^"]+)"/g)].map((match) => match[1]));
      expect(jobs).toEqual(new Set([service.metadata?.name]));
      expect([...query.matchAll(/topic="([^"]+)"/g)].map((match) => match[1])).toEqual([config.topics.input]);
    });

    it('holds the replica count while intake is paused for quota, instead of scaling on its lag', () => {
      expect(query).toMatch(/unless on \(\)[\s\S]*intake_pauses_total\{[^}]*reason="quota"[^}]*\}\[5m\]/);
      // The held value is the replicas there are (ready, else scraped) times the threshold:
      // the autoscaler's desired count (value / threshold) is then the current one.
      const held =
        /or on \(\)\s*\(\s*count\(partner_enrich_ready\{[^}]*\} == 1\)\s*or on \(\)\s*count\(partner_enrich_intake_paused\{[^}]*\}\)\s*\) \* (\d+)\s*$/.exec(
          query,
        );
      expect(held?.[1]).toBe(trigger?.metadata['threshold']);
      expect(trigger?.metadata['ignoreNullValues']).toBe('false');
      expect(scaled.spec?.fallback?.behavior).toBe('currentReplicas');
    });
  });
});

describe('the manifest validation', () => {
  it('rejects a Deployment field of the wrong type', async () => {
    const objects = renderWithChange('base/deployment.yaml', (text) =>
      text.replace('containerPort: 9464', "containerPort: 'metrics-port'"),
    );
    expect(await allSchemaProblems(objects)).toEqual([
      expect.stringMatching(/^Deployment\/partner-enrich: .*containerPort must be integer/),
    ]);
  });

  it('rejects a ScaledObject and a ServiceMonitor that their operators would not accept', async () => {
    const objects = renderWithChange('base/scaled-object.yaml', (text) =>
      text.replace('maxReplicaCount: 6', 'maxReplicaCount: six'),
    );
    expect(await allSchemaProblems(objects)).toEqual([
      expect.stringMatching(/^ScaledObject\/partner-enrich: .*maxReplicaCount must be integer/),
    ]);
    const monitored = renderWithChange('base/service-monitor.yaml', (text) =>
      text.replace('interval: 15s', 'interval: 15'),
    );
    expect(await allSchemaProblems(monitored)).toEqual([
      expect.stringMatching(/^ServiceMonitor\/partner-enrich: .*interval must be string/),
    ]);
  });

  it('rejects an object whose kind no schema describes', async () => {
    const objects = renderWithChange('base/pod-disruption-budget.yaml', (text) =>
      text.replace('apiVersion: policy/v1', 'apiVersion: policy/v1beta9'),
    );
    expect(await allSchemaProblems(objects)).toEqual([
      'PodDisruptionBudget/partner-enrich: no schema describes policy/v1beta9 PodDisruptionBudget',
    ]);
  });

  it('fails, naming kubectl, where kubectl is missing', () => {
    expect(() => renderKustomization(join(KUBERNETES_DIR, 'base'), '/nonexistent/kubectl')).toThrow(
      /\/nonexistent\/kubectl not found: the Kubernetes manifests cannot be rendered without kubectl/,
    );
  });
});
