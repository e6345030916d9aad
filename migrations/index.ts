import { CreateSchemasAndAccess1764400000000 } from './1764400000000-create-schemas-and-access';
import { CreateBronze1764400000001 } from './1764400000001-create-bronze';
import { CreateOps1764400000002 } from './1764400000002-create-ops';
import { CreateSilver1764400000003 } from './1764400000003-create-silver';
import { PartitionRace1764400000004 } from './1764400000004-partition-race';
import { BronzeOwnerPath1764400000005 } from './1764400000005-bronze-owner-path';
import { EventEmbeddings1764400000010 } from './1764400000010-event-embeddings';
import { JobKernel1764400000020 } from './1764400000020-job-kernel';
import { FactLineageAndRunProvenance1764400000030 } from './1764400000030-fact-lineage-and-run-provenance';
import { ApprovalsAndErasure1764400000200 } from './1764400000200-approvals-and-erasure';
import { CreateGold1764400000300 } from './1764400000300-create-gold';
import { GoldOverlays1764400000100 } from './1764400000100-gold-overlays';
import { GoldReview1764400000500 } from './1764400000500-gold-review';
import { ErasureReachesGold1764400000700 } from './1764400000700-erasure-reaches-gold';
import { GoldChangeLogIndex1764400000550 } from './1764400000550-gold-change-log-index';
import { EventContextReprojection1764400000800 } from './1764400000800-event-context-reprojection';
import { UnforgeableApprovals1764400000900 } from './1764400000900-unforgeable-approvals';
import { SilverEntityMentions1764400000910 } from './1764400000910-silver-entity-mentions';
import { ErasureRederivesSharedFacts1764400000960 } from './1764400000960-erasure-rederives-shared-facts';
import { EventSpeakerReprojection1764400000970 } from './1764400000970-event-speaker-reprojection';
import { OneOutboxWriter1764400000980 } from './1764400000980-one-outbox-writer';
import { QualityReportIndexes1764400001000 } from './1764400001000-quality-report-indexes';
import { MemoryLifecycle1764400001050 } from './1764400001050-memory-lifecycle';
import { ErasureRetiredReason1764400001060 } from './1764400001060-erasure-retired-reason';
import { HashChain1764400001100 } from './1764400001100-hash-chain';
import { DerivationTraceContext1764400001150 } from './1764400001150-derivation-trace-context';
import { ChainTick1764400001160 } from './1764400001160-chain-tick';
import { GraphConsistencySnapshots1764400001300 } from './1764400001300-graph-consistency-snapshots';
import { IngestThroughFunction1764400001400 } from './1764400001400-ingest-through-function';
import { ApprovalsBySecretAndLineage1764400001410 } from './1764400001410-approvals-by-secret-and-lineage';
import { RetentionCheckpoints1764400001420 } from './1764400001420-retention-checkpoints';
import { ChainVerifications1764400001430 } from './1764400001430-chain-verifications';
import { Imports1764400001440 } from './1764400001440-imports';
import { ErasureScrubsJudgeReasons1764400001450 } from './1764400001450-erasure-scrubs-judge-reasons';
import { ErasureFencesDerivationFirst1764400001460 } from './1764400001460-erasure-fences-derivation-first';
import { RetentionFencesDerivation1764400001470 } from './1764400001470-retention-fences-derivation';
import { PartitionsAttach1764400001480 } from './1764400001480-partitions-attach';

/** Every migration, oldest first. Listed explicitly so no glob depends on the build layout. */
export const migrations = [
  CreateSchemasAndAccess1764400000000,
  CreateBronze1764400000001,
  CreateOps1764400000002,
  CreateSilver1764400000003,
  PartitionRace1764400000004,
  BronzeOwnerPath1764400000005,
  EventEmbeddings1764400000010,
  JobKernel1764400000020,
  FactLineageAndRunProvenance1764400000030,
  ApprovalsAndErasure1764400000200,
  CreateGold1764400000300,
  GoldOverlays1764400000100,
  GoldReview1764400000500,
  GoldChangeLogIndex1764400000550,
  ErasureReachesGold1764400000700,
  EventContextReprojection1764400000800,
  UnforgeableApprovals1764400000900,
  SilverEntityMentions1764400000910,
  ErasureRederivesSharedFacts1764400000960,
  EventSpeakerReprojection1764400000970,
  OneOutboxWriter1764400000980,
  QualityReportIndexes1764400001000,
  MemoryLifecycle1764400001050,
  ErasureRetiredReason1764400001060,
  HashChain1764400001100,
  DerivationTraceContext1764400001150,
  ChainTick1764400001160,
  GraphConsistencySnapshots1764400001300,
  IngestThroughFunction1764400001400,
  ApprovalsBySecretAndLineage1764400001410,
  RetentionCheckpoints1764400001420,
  ChainVerifications1764400001430,
  Imports1764400001440,
  ErasureScrubsJudgeReasons1764400001450,
  ErasureFencesDerivationFirst1764400001460,
  RetentionFencesDerivation1764400001470,
  PartitionsAttach1764400001480,
];
