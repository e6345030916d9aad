import { DocumentNode, GraphQLSchema, Kind, OperationDefinitionNode } from 'graphql';
import * as clientDocuments from '../../packages/client/src/generated/graphql';

/** The label of an operation that is neither a client-package operation nor a single root field. */
export const OTHER_OPERATION = 'other';

/** The operation names of the checked-in client package (`packages/client/src/operations/*.graphql`). */
export function clientOperationNames(): ReadonlySet<string> {
  const names = new Set<string>();
  for (const value of Object.values(clientDocuments) as unknown[]) {
    const doc = value as Partial<DocumentNode> | null;
    if (doc?.kind !== Kind.DOCUMENT || !Array.isArray(doc.definitions)) continue;
    for (const d of doc.definitions) if (d.kind === Kind.OPERATION_DEFINITION && d.name) names.add(d.name.value);
  }
  return names;
}

/**
 * What `/metrics` and span names call a GraphQL operation: never the client's text. A name is
 * shown only when it is one of the client package's operations (`SearchMemory`, `IngestEvents`,
 * …); any other operation (unnamed, or named by the client) is named by its root field when it
 * selects exactly one (`searchMemory`, `facts`: fields of the schema's root types), else `other`.
 * So the label set is fixed by the code: an anonymous `query Patient_alice_HIV_positive { __typename }`
 * is `other`, and no client can add a series.
 */
export class OperationLabels {
  private readonly rootFields: Record<string, ReadonlySet<string>>;

  constructor(
    schema: GraphQLSchema,
    private readonly known: ReadonlySet<string> = clientOperationNames(),
  ) {
    const fields = (t: { getFields(): Record<string, unknown> } | null | undefined): ReadonlySet<string> => new Set(Object.keys(t?.getFields() ?? {}));
    this.rootFields = {
      query: fields(schema.getQueryType()),
      mutation: fields(schema.getMutationType()),
      subscription: fields(schema.getSubscriptionType()),
    };
  }

  /** The label of a resolved operation (undefined: the request did not get that far). */
  of(operation: OperationDefinitionNode | null | undefined): string {
    if (!operation) return OTHER_OPERATION;
    const name = operation.name?.value;
    if (name !== undefined && this.known.has(name)) return name;
    const selected = operation.selectionSet.selections.filter((s) => s.kind !== Kind.FIELD || s.name.value !== '__typename');
    const only = selected.length === 1 ? selected[0] : undefined;
    if (only?.kind === Kind.FIELD && this.rootFields[operation.operation]?.has(only.name.value)) return only.name.value;
    return OTHER_OPERATION;
  }
}
