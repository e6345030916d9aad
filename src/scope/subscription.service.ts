import { filter, pipe } from '@graphql-yoga/subscription';
import { AuthContext } from '../access/auth-context';
import { Capability } from '../access/capability';
import { CurrentAuth } from '../access/request-context';
import { EventIngestedMessage, FactsChangedMessage, JobChangedMessage, AppPubSub } from '../platform/pubsub/topics';
import { JobRow } from '../platform/jobs/job';
import { PipelineService } from '../silver/pipeline.service';
import { SilverException, SilverExceptionCode } from '../silver/silver.exception';

/**
 * Who may follow what: every live stream checks the grant when it opens and again, against the
 * caller's current grants, on every message, so a revoked token stops receiving. The streams
 * carry ids; the transport reads each object fresh through the owning service.
 */
export class SubscriptionService {
  constructor(
    private readonly pubSub: AppPubSub,
    private readonly pipeline: PipelineService,
  ) {}

  private inNamespace<M extends { namespace: string }>(
    auth: AuthContext,
    current: CurrentAuth,
    namespace: string,
    topic: 'EVENT_INGESTED' | 'FACT_ADDED' | 'FACT_SUPERSEDED',
  ): AsyncIterable<M> {
    auth.require(Capability.READ, namespace);
    return pipe(
      this.pubSub.subscribe(topic) as AsyncIterable<M>,
      filter(async (m: M) => m.namespace === namespace && Boolean((await current()).require(Capability.READ, namespace))),
    );
  }

  /** Every event stored in the namespace from now on (needs "read"). */
  eventsIngested(auth: AuthContext, current: CurrentAuth, namespace: string): AsyncIterable<EventIngestedMessage> {
    return this.inNamespace(auth, current, namespace, 'EVENT_INGESTED');
  }

  /** Facts as the workers add them (needs "read"). */
  factsAdded(auth: AuthContext, current: CurrentAuth, namespace: string): AsyncIterable<FactsChangedMessage> {
    return this.inNamespace(auth, current, namespace, 'FACT_ADDED');
  }

  /** Older facts replaced by newer ones (needs "read"). */
  factsSuperseded(auth: AuthContext, current: CurrentAuth, namespace: string): AsyncIterable<FactsChangedMessage> {
    return this.inNamespace(auth, current, namespace, 'FACT_SUPERSEDED');
  }

  /** Every change of a job (needs "read" on its namespace); a missing job and a foreign one look the same. */
  async jobChanges(auth: AuthContext, current: CurrentAuth, jobId: string): Promise<AsyncIterable<JobChangedMessage>> {
    const job = await this.pipeline.job(auth, jobId);
    if (!job) {
      throw new SilverException(
        SilverExceptionCode.NOT_READABLE,
        `no job ${JSON.stringify(String(jobId).slice(0, 60))} in your namespaces: pass the id a rebuild mutation returned`,
      );
    }
    return pipe(
      this.pubSub.subscribe('JOB_CHANGED'),
      filter(async (m: JobChangedMessage) => m.id === jobId && Boolean((await current()).require(Capability.READ, job.namespace ?? '*'))),
    );
  }

  /** A job a subscription delivers, read fresh with the caller's current grants. */
  async deliveredJob(auth: AuthContext, id: string): Promise<JobRow> {
    const j = await this.pipeline.job(auth, id);
    if (!j) throw new SilverException(SilverExceptionCode.NOT_READABLE, `job ${id} is no longer readable with your grants`);
    return j;
  }
}
