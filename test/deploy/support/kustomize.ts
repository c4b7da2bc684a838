// Renders a kustomization into the objects `kubectl apply -k` would send, with kubectl's
// built-in kustomize: the manifests are checked as they are applied, overlays and patches
// included, not as the files read one by one.
import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';

export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** kubectl is at /usr/bin/kubectl on the project's machines; KUBECTL names another. */
export const KUBECTL = process.env['KUBECTL'] ?? 'kubectl';

export function renderKustomization(dir: string, kubectl = KUBECTL): KubernetesObject[] {
  let output: string;
  try {
    output = execFileSync(kubectl, ['kustomize', dir], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    if (failure.code === 'ENOENT')
      throw new Error(
        `${kubectl} not found: the Kubernetes manifests cannot be rendered without kubectl ` +
          '(/usr/bin/kubectl on the project machines; set KUBECTL to use another)',
        { cause: error },
      );
    throw new Error(`${kubectl} kustomize ${dir} failed: ${failure.stderr?.trim() ?? failure.message}`, {
      cause: error,
    });
  }
  return parseAllDocuments(output).map((document) => document.toJS() as KubernetesObject);
}

/** `Kind/name`, how a problem names the object it was found in. */
export const objectName = (object: KubernetesObject): string => `${object.kind}/${object.metadata.name}`;
