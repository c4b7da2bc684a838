// docker-compose.yml: valid against the Compose Specification, and a stack that starts in order
// (each service after what it needs is healthy), whose Prometheus scrapes the pipeline and whose
// Grafana reads that Prometheus.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.ts';
import { composeProblems, parseComposeFile } from './support/compose-schema.ts';
import { composeEnvironments } from './support/environment.ts';

const ROOT = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, ROOT), 'utf8');

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
  restart?: string;
}
const compose = parseComposeFile(read('docker-compose.yml')) as { services: Record<string, Service> };
const { services } = compose;

/** host path -> container path of a service's bind mounts. */
const mounts = (service: Service | undefined): Map<string, string> =>
  new Map(
    (service?.volumes ?? []).map((volume) => {
      const [host = '', container = ''] = volume.split(':');
      return [host.replace(/^\.\//, ''), container];
    }),
  );

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification', () => {
    expect(composeProblems(compose)).toEqual([]);
  });

  it('builds this repository once as the image of the sandbox, the topic creation and the pipeline', () => {
    for (const name of ['sandbox', 'topics', 'run'])
      expect(services[name], name).toMatchObject({ image: 'partner-enrich', build: '.' });
    expect(services['topics']?.command).toEqual(['topics', 'create']);
    expect(services['run']?.command).toEqual(['run']);
    expect(services['sandbox']?.command?.[0]).toBe('sandbox');
  });

  it('starts each service after what it needs: healthy services, and the topics created', () => {
    expect(services['run']?.depends_on).toEqual({
      topics: { condition: 'service_completed_successfully' },
      'schema-registry': { condition: 'service_healthy' },
      sandbox: { condition: 'service_healthy' },
    });
    expect(services['topics']?.restart).toBe('no');
    for (const [name, service] of Object.entries(services)) {
      for (const [needed, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(Object.keys(services), `${name} depends on ${needed}`).toContain(needed);
        if (condition === 'service_healthy')
          expect(services[needed]?.healthcheck, `${needed}, awaited healthy by ${name}`).toBeDefined();
      }
    }
  });

  it('gives the pipeline a configuration that loads and serves its metrics beyond the container', () => {
    const environments = composeEnvironments(compose);
    expect(environments.map(({ where }) => where)).toEqual([
      'service sandbox',
      'service topics',
      'service run',
    ]);
    // The sandbox takes flags, not the configuration.
    expect(environments[0]?.env).toEqual({});
    const [topics, run] = ['service topics', 'service run'].map((service) =>
      loadConfig({ env: environments.find(({ where }) => where === service)?.env ?? {} }),
    );
    expect(topics?.kafka.brokers).toEqual(run?.kafka.brokers);
    if (!run) throw new Error('no run service');
    expect(run.observability.metricsHost).toBe('0.0.0.0');
    expect(run.refdata.baseUrl).toMatch(/^http:\/\/sandbox:/);
    expect(services['run']?.healthcheck?.test.join(' ')).toContain(
      `127.0.0.1:${run.observability.metricsPort}/readyz`,
    );
  });

  it('has Prometheus scrape the pipeline and load the alert rules it mounts', () => {
    const prometheusMounts = mounts(services['prometheus']);
    const configPath = [...prometheusMounts].find(([host]) => host === 'deploy/compose/prometheus.yml')?.[1];
    expect(configPath).toBe('/etc/prometheus/prometheus.yml');
    const config = parse(read('deploy/compose/prometheus.yml')) as {
      rule_files: string[];
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    expect(config.rule_files).toEqual([prometheusMounts.get('deploy/prometheus/alerts.yaml')]);
    const run = loadConfig({
      env: composeEnvironments(compose).find(({ where }) => where === 'service run')?.env ?? {},
    });
    expect(config.scrape_configs).toEqual([
      {
        // The job of the Kubernetes metrics Service, so that the same queries work in both.
        job_name: 'partner-enrich-metrics',
        static_configs: [{ targets: [`run:${run.observability.metricsPort}`] }],
      },
    ]);
  });

  it("provisions Grafana with the stack's Prometheus and the repository's dashboard", () => {
    const grafanaMounts = mounts(services['grafana']);
    expect(grafanaMounts.get('deploy/compose/grafana/datasources')).toBe(
      '/etc/grafana/provisioning/datasources',
    );
    expect(grafanaMounts.get('deploy/compose/grafana/dashboards')).toBe(
      '/etc/grafana/provisioning/dashboards',
    );
    const datasources = parse(read('deploy/compose/grafana/datasources/prometheus.yaml')) as {
      datasources: { type: string; url: string; isDefault: boolean }[];
    };
    expect(datasources.datasources).toEqual([
      expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090', isDefault: true }),
    ]);
    const dashboards = parse(read('deploy/compose/grafana/dashboards/partner-enrich.yaml')) as {
      providers: { options: { path: string } }[];
    };
    const dashboardFile = grafanaMounts.get('deploy/grafana/partner-enrich.json') ?? '';
    expect(dashboardFile.startsWith(`${dashboards.providers[0]?.options.path}/`)).toBe(true);
  });

  it('mounts the provisioning files of this folder, which exist', () => {
    const own = [...mounts(services['prometheus']).keys(), ...mounts(services['grafana']).keys()].filter(
      (host) => host.startsWith('deploy/compose/'),
    );
    expect(own).toHaveLength(3);
    for (const host of own) expect(existsSync(new URL(host, ROOT)), host).toBe(true);
  });
});

describe('the compose validation', () => {
  const planted = (change: (text: string) => string): unknown => {
    const text = read('docker-compose.yml');
    const changed = change(text);
    expect(changed, 'the planted mistake changes the file').not.toBe(text);
    return parseComposeFile(changed);
  };

  it('rejects a key the specification does not have', () => {
    const document = planted((text) =>
      text.replace("    restart: 'no'", "    restart: 'no'\n    dependson: [kafka]"),
    );
    expect(composeProblems(document)).toEqual([
      '/services/topics: must NOT have additional properties (dependson)',
    ]);
  });

  it('rejects a value of the wrong type', () => {
    // A duration is text such as 10s; a bare number is not one.
    const document = planted((text) =>
      text.replace('interval: 10s\n      timeout: 10s', 'interval: 10\n      timeout: 10s'),
    );
    expect(composeProblems(document)).toEqual(['/services/kafka/healthcheck/interval: must be string']);
  });
});
