// Passivation settings of one entity type (Pekko's passivation, Effect's maxIdleTime / maxResidentEntities):
// when this node stops entities that are idle or least recently used, and the checks made at start.
import { ActorTsError } from '../../errors.js';

/**
 * When entities of a type are stopped to bound memory. Both off by default: an in-memory entity loses its state
 * when passivated, so stopping it silently would change what a program computes (Akka passivates after 120 s
 * idle by default, Effect after `maxIdleTime`; both keep state elsewhere or expect the user to).
 */
export interface PassivationSettings {
  /** Stop an entity that received nothing for this long (ms, checked about every `idleMs / 2`). Default: never. */
  readonly idleMs?: number;
  /** Per node: beyond this many active entities of the type, the least recently used is stopped. Default: no limit. */
  readonly maxActiveEntities?: number;
}

/** Why an entity was passivated, as counted in `actor_ts_entities_passivated_total{reason}`. */
export type PassivationReason = 'idle' | 'limit' | 'self';

export const PASSIVATION_REASONS: ReadonlyArray<PassivationReason> = ['idle', 'limit', 'self'];

/** Smallest idle timeout: below it the sweep would run more often than every 50 ms. */
export const MIN_IDLE_MS = 100;
/** Largest idle timeout: what setTimeout takes without overflowing. */
export const MAX_IDLE_MS = 2_147_483_647;
/** Largest active-entity limit; a limit is about memory, and a billion entities would not fit one heap anyway. */
export const MAX_ACTIVE_ENTITIES = 1_000_000_000;

/** Throws `invalid_argument` naming the bad field of `passivation` (undefined is fine: no passivation). */
export function checkPassivation(passivation: unknown): void {
  if (passivation === undefined) return;
  if (typeof passivation !== 'object' || passivation === null || Array.isArray(passivation)) {
    throw invalid('passivation must be an object { idleMs?, maxActiveEntities? }');
  }
  for (const key of Object.keys(passivation)) {
    if (key !== 'idleMs' && key !== 'maxActiveEntities') throw invalid(`unknown passivation setting "${key}"`);
  }
  const { idleMs, maxActiveEntities } = passivation as Record<string, unknown>;
  if (idleMs !== undefined && !isIntegerIn(idleMs, MIN_IDLE_MS, MAX_IDLE_MS)) {
    throw invalid(`passivation.idleMs must be an integer in ${MIN_IDLE_MS}..${MAX_IDLE_MS}, got ${String(idleMs)}`);
  }
  if (maxActiveEntities !== undefined && !isIntegerIn(maxActiveEntities, 1, MAX_ACTIVE_ENTITIES)) {
    throw invalid(
      `passivation.maxActiveEntities must be an integer in 1..${MAX_ACTIVE_ENTITIES}, got ${String(maxActiveEntities)}`,
    );
  }
}

function isIntegerIn(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}

function invalid(message: string): ActorTsError {
  return new ActorTsError('invalid_argument', message);
}
