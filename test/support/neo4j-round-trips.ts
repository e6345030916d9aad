import { Driver, ManagedTransaction, Session, Transaction } from 'neo4j-driver';

/**
 * What the service sent to Neo4j through one driver since the last reset: transactions (managed
 * `executeRead`/`executeWrite`, explicit `beginTransaction`, auto-commit `session.run`) and Cypher
 * statements run in them. The Neo4j side of the round-trip tests; the SQL side is `app.queryCounter`.
 */
export class Neo4jRoundTrips {
  transactions = 0;
  statements = 0;
  /** The text of each statement since the last reset (the first 500 kept). */
  readonly texts: string[] = [];
  reset(): void {
    this.transactions = 0;
    this.statements = 0;
    this.texts.length = 0;
  }
  record(query: unknown): void {
    this.statements += 1;
    if (this.texts.length < 500) this.texts.push(typeof query === 'string' ? query : JSON.stringify(query));
  }
}

type Runner = ManagedTransaction | Transaction;

/**
 * Counts every session the driver opens from now on (the services share the app's one driver and
 * open a session per read) and every `executeQuery`, until `restore()`. Test-only: production code
 * has no hook for it.
 */
export function countNeo4jRoundTrips(driver: Driver): { counter: Neo4jRoundTrips; restore(): void } {
  const counter = new Neo4jRoundTrips();
  const counted = <T extends Runner>(tx: T): T =>
    new Proxy(tx, {
      get(target, prop) {
        if (prop !== 'run') {
          const value: unknown = Reflect.get(target, prop, target);
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return (...args: Parameters<T['run']>) => {
          counter.record(args[0]);
          return (target.run as (...a: Parameters<T['run']>) => ReturnType<T['run']>)(...args);
        };
      },
    });

  const open = driver.session;
  driver.session = (...args: Parameters<Driver['session']>): Session => {
    const session = open.apply(driver, args);
    for (const name of ['executeRead', 'executeWrite'] as const) {
      const managed = session[name].bind(session);
      session[name] = <T>(work: (tx: ManagedTransaction) => Promise<T> | T, config?: Parameters<Session['executeRead']>[1]): Promise<T> => {
        counter.transactions += 1;
        return managed((tx) => work(counted(tx)), config);
      };
    }
    const begin = session.beginTransaction.bind(session);
    session.beginTransaction = (...a: Parameters<Session['beginTransaction']>) => {
      counter.transactions += 1;
      return counted(begin(...a));
    };
    const run = session.run.bind(session);
    session.run = ((...a: Parameters<Session['run']>) => {
      counter.transactions += 1;
      counter.record(a[0]);
      return run(...a);
    }) as Session['run'];
    return session;
  };
  // executeQuery runs through a session the driver made with its own `session`, bound at construction.
  const query = driver.executeQuery;
  driver.executeQuery = ((...a: Parameters<Driver['executeQuery']>) => {
    counter.transactions += 1;
    counter.record(a[0]);
    return query.apply(driver, a);
  }) as Driver['executeQuery'];
  return {
    counter,
    restore: () => {
      driver.session = open;
      driver.executeQuery = query;
    },
  };
}
