import type { OpenApiDocument, OpenApiOperation } from '../../api';

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;
export type HttpMethod = (typeof METHODS)[number];

export interface OperationEntry {
  method: HttpMethod;
  path: string;
  operation: OpenApiOperation;
}

export interface TagGroup {
  /** null for operations without a tag; the screen labels it "Other". */
  tag: string | null;
  description?: string;
  operations: OperationEntry[];
}

/**
 * Groups operations by their first tag. Tags keep the order the document declares (the server lists them
 * by product area), undeclared tags follow alphabetically, untagged operations come last.
 */
export function listOperations(document: OpenApiDocument): TagGroup[] {
  const groups = new Map<string | null, OperationEntry[]>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (typeof operation !== 'object' || operation === null) continue;
      const op = operation as OpenApiOperation;
      const tag = op.tags?.[0] ?? null;
      const list = groups.get(tag) ?? [];
      list.push({ method, path, operation: op });
      groups.set(tag, list);
    }
  }

  const declared = (document.tags ?? []).map((tag) => tag.name);
  const rank = (tag: string | null) => (tag === null ? Infinity : declared.indexOf(tag) === -1 ? declared.length : declared.indexOf(tag));
  const tags = [...groups.keys()].sort((a, b) => rank(a) - rank(b) || String(a).localeCompare(String(b)));

  return tags.map((tag) => ({
    tag,
    description: document.tags?.find((item) => item.name === tag)?.description,
    operations: (groups.get(tag) ?? []).sort(
      (a, b) => a.path.localeCompare(b.path) || METHODS.indexOf(a.method) - METHODS.indexOf(b.method),
    ),
  }));
}

/** Lower-case match on method, path and summary, for the filter box. */
export function matchesFilter(entry: OperationEntry, filter: string): boolean {
  const needle = filter.trim().toLowerCase();
  if (!needle) return true;
  return [entry.method, entry.path, entry.operation.summary ?? '', entry.operation.operationId ?? '']
    .some((text) => text.toLowerCase().includes(needle));
}
