// The environment each partner-enrich container gets, from the rendered Kubernetes objects
// and from docker-compose.yml, and the check that every variable in it is one the
// configuration loader reads. The loader ignores PARTNER_ENRICH_ names without `__` (the
// local infrastructure's) and any other name, so a misspelt variable would change nothing
// without a word: here it is a problem.
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { configOptions, CONFIG_FILE_ENV_VAR, ENV_SHORTHANDS } from '../../../src/config/index.ts';
import { objectName, type KubernetesObject } from './kustomize.ts';

/** Every variable the configuration loader reads (src/config/env.ts). */
export const ACCEPTED_ENV_VARS: ReadonlySet<string> = new Set([
  ...configOptions.map((option) => option.envVar),
  ...Object.keys(ENV_SHORTHANDS),
  CONFIG_FILE_ENV_VAR,
]);

export const SECRET_ENV_VARS: ReadonlySet<string> = new Set(
  configOptions.filter((option) => option.secret).map((option) => option.envVar),
);

/** This project's image, under any registry and tag. */
export const isPartnerEnrichImage = (image: unknown): boolean =>
  typeof image === 'string' && /(^|\/)partner-enrich(:[\w.-]+)?(@sha256:[0-9a-f]+)?$/.test(image);

export interface ContainerEnvironment {
  /** Which container or service, for messages. */
  where: string;
  /** Name -> value; a value from a Secret is a placeholder naming it. */
  env: Record<string, string>;
  /** What could not be read as variables (a whole Secret imported, an env file). */
  problems: string[];
}

export function unacceptedEnvVars(environments: ContainerEnvironment[]): string[] {
  return environments.flatMap(({ where, env, problems }) => [
    ...problems,
    ...Object.keys(env)
      .filter((name) => !ACCEPTED_ENV_VARS.has(name))
      .map((name) => `${where}: ${name} is not a variable the configuration reads`),
  ]);
}

const member = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;

/** The pod template of a workload, wherever its kind keeps it. */
export function podSpecOf(object: KubernetesObject): IPodSpec | undefined {
  const path =
    object.kind === 'Pod'
      ? ['spec']
      : object.kind === 'CronJob'
        ? ['spec', 'jobTemplate', 'spec', 'template', 'spec']
        : ['spec', 'template', 'spec'];
  return path.reduce<unknown>(member, object) as IPodSpec | undefined;
}

/** The environment of every partner-enrich container of the objects. */
export function kubernetesEnvironments(objects: KubernetesObject[]): ContainerEnvironment[] {
  const configMaps = new Map(
    objects
      .filter((object) => object.kind === 'ConfigMap')
      .map((object) => [object.metadata.name, (object['data'] ?? {}) as Record<string, string>]),
  );
  return objects.flatMap((object) => {
    const pod = podSpecOf(object);
    const containers = [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])];
    return containers
      .filter((container) => isPartnerEnrichImage(container.image))
      .map((container) => {
        const where = `${objectName(object)}, container ${container.name}`;
        const env: Record<string, string> = {};
        const problems: string[] = [];
        for (const source of container.envFrom ?? []) {
          if (source.secretRef) {
            problems.push(
              `${where}: imports the whole Secret ${source.secretRef.name}, whose names cannot be checked`,
            );
            continue;
          }
          const name = source.configMapRef?.name ?? '';
          const data = configMaps.get(name);
          if (!data) problems.push(`${where}: ConfigMap ${name} is not among the manifests`);
          for (const [key, value] of Object.entries(data ?? {})) env[`${source.prefix ?? ''}${key}`] = value;
        }
        for (const variable of container.env ?? []) {
          const secret = variable.valueFrom?.secretKeyRef;
          const fromConfigMap = variable.valueFrom?.configMapKeyRef;
          env[variable.name] = secret
            ? `<secret ${secret.name}/${secret.key}>`
            : fromConfigMap
              ? (configMaps.get(fromConfigMap.name ?? '')?.[fromConfigMap.key] ?? '')
              : (variable.value ?? '');
        }
        return { where, env, problems };
      });
  });
}

interface ComposeService {
  image?: string;
  environment?: Record<string, string | number | boolean | null> | string[];
  env_file?: unknown;
}

/** The environment of every partner-enrich service of a compose document. */
export function composeEnvironments(document: unknown): ContainerEnvironment[] {
  const services = (member(document, 'services') ?? {}) as Record<string, ComposeService>;
  return Object.entries(services)
    .filter(([, service]) => isPartnerEnrichImage(service.image))
    .map(([name, service]) => {
      const where = `service ${name}`;
      const env: Record<string, string> = {};
      const listed = Array.isArray(service.environment)
        ? service.environment.map((entry) => {
            const at = entry.indexOf('=');
            return at < 0 ? [entry, ''] : [entry.slice(0, at), entry.slice(at + 1)];
          })
        : Object.entries(service.environment ?? {});
      for (const [key, value] of listed) env[String(key)] = value === null ? '' : String(value);
      const problems =
        service.env_file === undefined
          ? []
          : [`${where}: reads an env_file, whose names are not checked here`];
      return { where, env, problems };
    });
}
