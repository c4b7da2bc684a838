// Checks a PromQL expression with Prometheus' own grammar (@prometheus-io/lezer-promql, the
// parser of Prometheus' web UI): that it parses, that every metric it selects is one the
// pipeline exports (or a known external one), and that rate(), irate() and increase() are
// given counters.
import { parser } from '@prometheus-io/lezer-promql';
import type { Series } from './exported-series.ts';

type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

// Grafana replaces these before the query reaches Prometheus; any duration parses the same.
const GRAFANA_DURATIONS = /\$__(?:rate_interval|interval|range)\b|\$\{__(?:rate_interval|interval|range)\}/g;

const COUNTER_FUNCTIONS = new Set(['Rate', 'Irate', 'Increase']);

/** The expression as Prometheus receives it from Grafana: its duration variables filled in. */
export const withGrafanaDurations = (expr: string): string => expr.replace(GRAFANA_DURATIONS, '5m');

/** The function a call node calls, as the grammar names it (`Rate`, `HistogramQuantile`, ...). */
const functionOf = (call: SyntaxNode): string | undefined =>
  call.getChild('FunctionIdentifier')?.firstChild?.name;

function enclosingFunction(node: SyntaxNode): string | undefined {
  for (let parent = node.parent; parent; parent = parent.parent)
    if (parent.name === 'FunctionCall') return functionOf(parent);
  return undefined;
}

/** What is wrong with the expression; empty when nothing is. */
export function promqlProblems(expr: string, series: ReadonlyMap<string, Series>): string[] {
  const text = withGrafanaDurations(expr);
  const problems: string[] = [];
  let parsed = true;
  parser.parse(text).iterate({
    enter(ref) {
      if (ref.type.isError) {
        // The parser recovers and goes on; the first error is the one to fix.
        if (!parsed) return;
        parsed = false;
        problems.push(
          `syntax error at ${ref.from}: …${text.slice(Math.max(0, ref.from - 20), ref.from + 20)}…`,
        );
        return;
      }
      if (ref.name !== 'VectorSelector') return;
      const identifier = ref.node.getChild('Identifier');
      if (!identifier) {
        problems.push(`a selector without a metric name: ${text.slice(ref.from, ref.to)}`);
        return;
      }
      const name = text.slice(identifier.from, identifier.to);
      const known = series.get(name);
      const calledBy = enclosingFunction(ref.node);
      if (!known) problems.push(`${name} is not a series the pipeline exports`);
      else if (calledBy && COUNTER_FUNCTIONS.has(calledBy) && known.kind !== 'counter')
        problems.push(`${calledBy.toLowerCase()}() of ${name}, a ${known.kind}`);
    },
  });
  return problems;
}

/** The metric names the expression selects. */
export function selectedMetrics(expr: string): string[] {
  const text = withGrafanaDurations(expr);
  const names: string[] = [];
  parser.parse(text).iterate({
    enter(ref) {
      const identifier = ref.name === 'VectorSelector' ? ref.node.getChild('Identifier') : null;
      if (identifier) names.push(text.slice(identifier.from, identifier.to));
    },
  });
  return names;
}
