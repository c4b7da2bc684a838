// Each rendered object against the OpenAPI schema of its apiVersion and kind, as the API
// server checks types and required fields: the built-in kinds from kubernetes-models, the
// custom resources from the @kubernetes-models package of their operator. An object whose
// kind none of them describes is a problem too, rather than passing unchecked.
// The schemas leave unknown fields alone (the API server's strict field validation rejects
// them, not its schemas), so a misspelt optional field passes here: the manifests' own test
// asserts the fields that matter.
import { objectName, type KubernetesObject } from './kustomize.ts';

interface Model {
  validate(): void;
}
type ModelClass = new (data: unknown) => Model;

/** The package that describes a custom resource's API group; the built-in groups are kubernetes-models'. */
const CUSTOM_RESOURCE_PACKAGES: Readonly<Record<string, string>> = {
  'keda.sh': '@kubernetes-models/keda',
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
};

async function modelOf(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const models = CUSTOM_RESOURCE_PACKAGES[group] ?? 'kubernetes-models';
  // Every package lays its models out as <apiVersion>/<Kind>, the core group's as v1/<Kind>.
  const module = (await import(`${models}/${apiVersion}/${kind}`).catch(() => undefined)) as
    Record<string, ModelClass | undefined> | undefined;
  return module?.[kind];
}

/** What is wrong with the object against its kind's schema; empty when nothing is. */
export async function schemaProblems(object: KubernetesObject): Promise<string[]> {
  const Model = await modelOf(String(object.apiVersion), String(object.kind));
  if (!Model) return [`${objectName(object)}: no schema describes ${object.apiVersion} ${object.kind}`];
  try {
    new Model(object).validate();
    return [];
  } catch (error) {
    return [`${objectName(object)}: ${(error as Error).message}`];
  }
}

export async function allSchemaProblems(objects: KubernetesObject[]): Promise<string[]> {
  return (await Promise.all(objects.map(schemaProblems))).flat();
}
