// The order of the parallel group's files: the few that take longest start first, so none of them
// is still running alone at the end; the rest as vitest orders them (its cached durations, else size).
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Longest first: they mostly wait for dumps at the lowest priority, the others fill the cores. */
const LONG = ["preamble-corpus.test.ts", "preamble.test.ts", "project-installed.test.ts"];

const rank = (spec: TestSpecification) => {
  const i = LONG.findIndex((n) => spec.moduleId.endsWith(`/test/${n}`));
  return i < 0 ? LONG.length : i;
};

export class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // stable: within a rank, vitest's own order
    const group = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => group(a.spec) - group(b.spec) || rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
