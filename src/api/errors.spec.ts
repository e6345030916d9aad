import { GraphQLError } from 'graphql';
import { Neo4jError } from 'neo4j-driver';
import { formatApiError } from './errors';

describe('formatApiError', () => {
  const logged: unknown[] = [];
  const format = (error: unknown) => formatApiError({ message: 'raw', path: ['graphFacts'] }, error, (_m, err) => logged.push(err));

  it('reports a Neo4j transaction timeout, however deeply wrapped by delegation, as LIMIT_EXCEEDED', () => {
    const timeout = new Neo4jError(
      'The transaction has not completed within the timeout specified at its start by the client.',
      'Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration',
      'GQL',
      'desc',
    );
    const wrapped = new GraphQLError('outer', { originalError: new GraphQLError('inner', { originalError: timeout }) });
    const out = format(wrapped);
    expect(out.extensions).toEqual({ code: 'LIMIT_EXCEEDED', reason: 'QUERY_TIMEOUT' });
    expect(out.message).toMatch(/EXPLORE_TIMEOUT_MS/);
    expect(out.path).toEqual(['graphFacts']);
    expect(logged).toHaveLength(0);
  });

  it('keeps other Neo4j failures internal: logged, not shown', () => {
    const other = new Neo4jError('connection refused to 10.0.0.7:7687', 'ServiceUnavailable', 'GQL', 'desc');
    const out = format(new GraphQLError('outer', { originalError: other }));
    expect(out).toEqual({
      message: 'internal error: the service logged the details',
      path: ['graphFacts'],
      locations: undefined,
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    expect(logged).toEqual([other]);
  });
});
