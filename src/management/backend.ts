// What the management API needs from a running node. The node wiring implements it over the cluster,
// the sharding runtime and the placement controllers; route tests can drive a real node through it.
import type { Hlc, PlacementStoreStats } from '../../crdt/index.js';
import type { MemberInfo } from '../cluster/member.js';
import type { PlacementWriteOptions } from '../sharding/api/external-allocation-controller.js';
import type { NodeAddress } from '../cluster/address.js';
import type * as sharding from '../sharding/index.js';
import type { ReplicationHealth } from './replication-health.js';

// The API speaks the sharding runtime's types (the same types, not copies), so its clients (cli/client.ts, the
// node's backend) import them from here.
export type {
  DryRunMoves,
  ParsedPin,
  PinRecord,
  PinRequest,
  PinScope,
  PlacementsDryRun,
  RebalanceNowResult,
  ShardExplanation,
  ShardId,
  ShardLocations,
} from '../sharding/index.js';
/** The answer of a manual rebalance (the API rejects out-of-range ids first, so `unknown` is never sent). */
export type RebalanceOutcome = Pick<sharding.RebalanceNowResult, 'accepted' | 'unallocated'>;
/** The placement store replica's size, as the API reports it. */
export type PlacementStoreHealth = Pick<PlacementStoreStats, 'generation' | 'slots' | 'baseSlots' | 'documentItems'>;

/** This node's placement storage, as `GET /actor-ts/health` reports it under `storage`. */
export interface StorageHealth {
  /** False for the in-memory store (no data directory): placements do not survive a full restart. */
  readonly durable: boolean;
  /** The data directory, or null in memory. */
  readonly path: string | null;
  readonly bytesOnDisk: number;
  /** When the last commit finished (ms since the epoch), or null before the first. */
  readonly lastCommitAt: number | null;
  readonly logRecordsSinceSnapshot: number;
  /** The replica was rebuilt from data on disk at startup. */
  readonly restored: boolean;
  /** Why storage stopped taking writes, or null; non-null makes an `ok` health `degraded`. */
  readonly failure: string | null;
}

/** A cordon as written: the node address, who and why, and the timestamp that decides it. */
export interface CordonWritten {
  readonly address: string;
  readonly cordoned: true;
  readonly by: string | null;
  readonly reason: string | null;
  readonly hlc: Hlc;
}

/** What a drain started: the cordon, and per entity type the hand-offs (each with the home chosen now). */
export interface DrainOutcome {
  readonly address: string;
  readonly cordon: CordonWritten;
  readonly moves: Readonly<Record<string, readonly sharding.DrainMove[]>>;
  /** Types whose shards no other region could take (those stay); empty when every shard moves. */
  readonly warnings: readonly string[];
}

/** Whether this node may take placement writes now, and if not, why (the 503 `not_a_member` message). */
export type WriteAccess =
  | { readonly writable: true }
  | {
      readonly writable: false;
      readonly code: 'not_a_member' | 'no_majority' | 'paused' | 'clock_skew';
      readonly reason: string;
    };

/** A member's release and the protocol version spoken with it (`GET /actor-ts/cluster/members`). */
export interface MemberProtocol {
  /** Its package version; undefined for a release before negotiation, which announced none. */
  readonly release: string | undefined;
  readonly protocol: number;
}

/**
 * What the management API needs from a node: members, entity types, shard locations, placements and cordons.
 * `startNode` provides one; implement it to serve the API from your own wiring.
 */
export interface ManagementBackend {
  readonly self: NodeAddress;
  /** Entity types initialised on this node, with their shard count. */
  entityTypes(): ReadonlyMap<
    string,
    {
      readonly numberOfShards: number;
      readonly shardIdFunction?: string;
      /** Its entities active on this node now. */
      readonly activeEntities?: number;
      readonly durable?: boolean;
    }
  >;
  members(): ReadonlyArray<MemberInfo>;
  /**
   * The release a member runs and the protocol version this node speaks with it (its own newest for itself), as the
   * transport's handshakes found; undefined when not known (no connection yet, or a transport without handshakes).
   */
  protocolOf?(address: NodeAddress): MemberProtocol | undefined;
  /** Why this node cannot commit durable entities now, or undefined; a reason makes an `ok` health `degraded`. */
  entityStoreProblem?(): string | undefined;
  /**
   * What the routes parse a pin for this type against (parsePins): its shard range and the clock its expiry
   * counts from. Throws ActorTsError `unknown_type` for a type not initialised here.
   */
  pinScope(typeName: string): sharding.PinScope;
  /**
   * Writes all pins locally (they replicate to every node), or none. The route parsed them (against pinScope);
   * rejects with PlacementRuleError `unknown_target` when a target matches no current member (unless allowed).
   */
  setPlacements(
    typeName: string,
    pins: ReadonlyArray<sharding.ParsedPin>,
    options?: PlacementWriteOptions,
  ): Promise<readonly sharding.PinRecord[]>;
  /** False when the shard had no explicit placement. */
  removePlacement(typeName: string, shardId: sharding.ShardId): Promise<boolean>;
  /** Placements by ascending shard id; expired ones (with `expired`) only with includeExpired. */
  placements(typeName: string, options?: { readonly includeExpired?: boolean }): ReadonlyArray<sharding.PinRecord>;
  rebalance(typeName: string, shardIds: readonly sharding.ShardId[]): Promise<RebalanceOutcome>;
  shardLocations(typeName: string): Promise<sharding.ShardLocations>;
  /** Why a shard is where it is, answered by the type's coordinator. */
  explain(typeName: string, shardId: sharding.ShardId): Promise<sharding.ShardExplanation>;
  /** What setPlacements would start now, judged the same way (same errors); nothing is written. */
  dryRunPlacements(
    typeName: string,
    pins: ReadonlyArray<sharding.ParsedPin>,
    options?: PlacementWriteOptions,
  ): Promise<sharding.PlacementsDryRun>;
  /** What rebalance would start now and where each shard would land; nothing is handed off. */
  dryRunRebalance(typeName: string, shardIds: readonly sharding.ShardId[]): Promise<sharding.DryRunMoves>;
  /** Liveness of this node as the cluster sees it. */
  health(): { readonly status: 'ok' | 'starting' | 'leaving' | 'down'; readonly memberStatus: string | undefined };
  /** Whether this node's placement replica replicates; its problems make an `ok` health `degraded`. */
  replication(): ReplicationHealth;
  /** The placement store replica's size: its generation, live slots, compacted slots and history items. */
  placementStore(): PlacementStoreHealth;
  /** Where this node keeps its placements and how that storage is doing. */
  storage(): StorageHealth;
  /**
   * Whether this node is a member that may write placements (writes are refused with 503 otherwise, so a
   * node outside the cluster never acknowledges a write it can only keep to itself).
   */
  writeAccess(): WriteAccess;
  /** The cluster-wide cordons as this node's replica holds them, by address. */
  cordons(): readonly sharding.CordonRecord[];
  /**
   * Cordons a member (the write replicates from here). Rejects with ActorTsError `invalid_address`,
   * CordonError `unknown_member` (not a member), PlacementRuleError for a bad by/reason; nothing written then.
   */
  cordon(address: string, provenance: sharding.CordonProvenance): Promise<CordonWritten>;
  /** Removes a cordon; rejects with CordonError `not_cordoned` when there was none (nothing written). */
  uncordon(address: string): Promise<Hlc>;
  /**
   * Cordons a member, then hands off every shard it hosts. Rejects with CordonError `no_capacity` (nothing
   * cordoned, nothing moved) when no other member could take the shards of a type it hosts.
   */
  drain(address: string, provenance: sharding.CordonProvenance): Promise<DrainOutcome>;
}
