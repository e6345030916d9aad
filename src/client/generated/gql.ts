/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "query GetEvent($id: ID!) {\n  event(id: $id) {\n    ...EventFields\n  }\n}\n\nquery GetEventNode($id: ID!) {\n  eventNode(id: $id) {\n    id\n    namespace\n    kind\n    projectedAt\n  }\n}\n\nsubscription OnEventIngested($namespace: String!) {\n  eventIngested(namespace: $namespace) {\n    id\n    namespace\n    kind\n    content\n    occurredAt\n  }\n}": typeof types.GetEventDocument,
    "fragment EventFields on Event {\n  id\n  namespace\n  source\n  sourceEventId\n  provenanceRoot\n  kind\n  conversationId\n  sessionId\n  sequenceNum\n  role\n  actor\n  content\n  rawPayload\n  checksum\n  occurredAt\n  ingestedAt\n  derivationStatus\n}\n\nmutation IngestEvent($input: EventInput!) {\n  ingestEvent(input: $input) {\n    index\n    status\n    code\n    reason\n    event {\n      ...EventFields\n    }\n  }\n}\n\nmutation IngestEvents($input: [EventInput!]!) {\n  ingestEvents(input: $input) {\n    index\n    status\n    code\n    reason\n    event {\n      id\n      checksum\n    }\n  }\n}": typeof types.EventFieldsFragmentDoc,
    "mutation CreateToken($input: TokenInput!) {\n  createToken(input: $input) {\n    token\n    info {\n      id\n      name\n      tokenPrefix\n      grants {\n        namespacePattern\n        capabilities\n      }\n    }\n  }\n}\n\nmutation RevokeToken($id: ID!) {\n  revokeToken(id: $id)\n}": typeof types.CreateTokenDocument,
    "query Viewer {\n  viewer {\n    tokenId\n    principalId\n    name\n    grants {\n      namespacePattern\n      capabilities\n    }\n  }\n}": typeof types.ViewerDocument,
};
const documents: Documents = {
    "query GetEvent($id: ID!) {\n  event(id: $id) {\n    ...EventFields\n  }\n}\n\nquery GetEventNode($id: ID!) {\n  eventNode(id: $id) {\n    id\n    namespace\n    kind\n    projectedAt\n  }\n}\n\nsubscription OnEventIngested($namespace: String!) {\n  eventIngested(namespace: $namespace) {\n    id\n    namespace\n    kind\n    content\n    occurredAt\n  }\n}": types.GetEventDocument,
    "fragment EventFields on Event {\n  id\n  namespace\n  source\n  sourceEventId\n  provenanceRoot\n  kind\n  conversationId\n  sessionId\n  sequenceNum\n  role\n  actor\n  content\n  rawPayload\n  checksum\n  occurredAt\n  ingestedAt\n  derivationStatus\n}\n\nmutation IngestEvent($input: EventInput!) {\n  ingestEvent(input: $input) {\n    index\n    status\n    code\n    reason\n    event {\n      ...EventFields\n    }\n  }\n}\n\nmutation IngestEvents($input: [EventInput!]!) {\n  ingestEvents(input: $input) {\n    index\n    status\n    code\n    reason\n    event {\n      id\n      checksum\n    }\n  }\n}": types.EventFieldsFragmentDoc,
    "mutation CreateToken($input: TokenInput!) {\n  createToken(input: $input) {\n    token\n    info {\n      id\n      name\n      tokenPrefix\n      grants {\n        namespacePattern\n        capabilities\n      }\n    }\n  }\n}\n\nmutation RevokeToken($id: ID!) {\n  revokeToken(id: $id)\n}": types.CreateTokenDocument,
    "query Viewer {\n  viewer {\n    tokenId\n    principalId\n    name\n    grants {\n      namespacePattern\n      capabilities\n    }\n  }\n}": types.ViewerDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query GetEvent($id: ID!) {\n  event(id: $id) {\n    ...EventFields\n  }\n}\n\nquery GetEventNode($id: ID!) {\n  eventNode(id: $id) {\n    id\n    namespace\n    kind\n    projectedAt\n  }\n}\n\nsubscription OnEventIngested($namespace: String!) {\n  eventIngested(namespace: $namespace) {\n    id\n    namespace\n    kind\n    content\n    occurredAt\n  }\n}"): (typeof documents)["query GetEvent($id: ID!) {\n  event(id: $id) {\n    ...EventFields\n  }\n}\n\nquery GetEventNode($id: ID!) {\n  eventNode(id: $id) {\n    id\n    namespace\n    kind\n    projectedAt\n  }\n}\n\nsubscription OnEventIngested($namespace: String!) {\n  eventIngested(namespace: $namespace) {\n    id\n    namespace\n    kind\n    content\n    occurredAt\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "fragment EventFields on Event {\n  id\n  namespace\n  source\n  sourceEventId\n  provenanceRoot\n  kind\n  conversationId\n  sessionId\n  sequenceNum\n  role\n  actor\n  content\n  rawPayload\n  checksum\n  occurredAt\n  ingestedAt\n  derivationStatus\n}\n\nmutation IngestEvent($input: EventInput!) {\n  ingestEvent(input: $input) {\n    index\n    status\n    code\n    reason\n    event {\n      ...EventFields\n    }\n  }\n}\n\nmutation IngestEvents($input: [EventInput!]!) {\n  ingestEvents(input: $input) {\n    index\n    status\n    code\n    reason\n    event {\n      id\n      checksum\n    }\n  }\n}"): (typeof documents)["fragment EventFields on Event {\n  id\n  namespace\n  source\n  sourceEventId\n  provenanceRoot\n  kind\n  conversationId\n  sessionId\n  sequenceNum\n  role\n  actor\n  content\n  rawPayload\n  checksum\n  occurredAt\n  ingestedAt\n  derivationStatus\n}\n\nmutation IngestEvent($input: EventInput!) {\n  ingestEvent(input: $input) {\n    index\n    status\n    code\n    reason\n    event {\n      ...EventFields\n    }\n  }\n}\n\nmutation IngestEvents($input: [EventInput!]!) {\n  ingestEvents(input: $input) {\n    index\n    status\n    code\n    reason\n    event {\n      id\n      checksum\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation CreateToken($input: TokenInput!) {\n  createToken(input: $input) {\n    token\n    info {\n      id\n      name\n      tokenPrefix\n      grants {\n        namespacePattern\n        capabilities\n      }\n    }\n  }\n}\n\nmutation RevokeToken($id: ID!) {\n  revokeToken(id: $id)\n}"): (typeof documents)["mutation CreateToken($input: TokenInput!) {\n  createToken(input: $input) {\n    token\n    info {\n      id\n      name\n      tokenPrefix\n      grants {\n        namespacePattern\n        capabilities\n      }\n    }\n  }\n}\n\nmutation RevokeToken($id: ID!) {\n  revokeToken(id: $id)\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Viewer {\n  viewer {\n    tokenId\n    principalId\n    name\n    grants {\n      namespacePattern\n      capabilities\n    }\n  }\n}"): (typeof documents)["query Viewer {\n  viewer {\n    tokenId\n    principalId\n    name\n    grants {\n      namespacePattern\n      capabilities\n    }\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;