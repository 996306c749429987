// Who asks and why, for every writing command: `--by` (default `$USER@hostname`) and `--reason`, checked
// with the API's own validators so a bad value is a usage error and nothing is sent.
import { hostname, userInfo } from 'node:os';
import { type Command, InvalidArgumentError } from 'commander';
import { ActorTsError } from '../errors.js';
import { MAX_BY_LENGTH, validateBy, validateReason } from '../sharding/placements/placement-options.js';
import type { Provenance } from './client.js';

export interface ProvenanceOptions {
  reason?: string;
  by?: string;
}

/** Adds `--reason` and `--by` to a writing command. */
export function withProvenance(command: Command): Command {
  return command
    .option(
      '--reason <text>',
      'why (at most 500 characters); recorded in the audit trail of the node that takes the write',
    )
    .option('--by <who>', 'who asks (default $USER@hostname)');
}

/** The by/reason to send: validated, with by defaulting to `$USER@hostname`. Throws InvalidArgumentError. */
export function provenanceOf(options: ProvenanceOptions): { by: string; reason?: string } {
  try {
    return {
      by: options.by !== undefined ? validateBy(options.by) : defaultBy(),
      ...(options.reason !== undefined ? { reason: validateReason(options.reason) } : {}),
    };
  } catch (error) {
    if (error instanceof ActorTsError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

/** `$USER@hostname`, cut to what the API accepts. */
export function defaultBy(): string {
  const user = process.env['USER'] || safeUserName() || 'unknown';
  const by = `${user}@${hostname()}`.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
  return by.slice(0, MAX_BY_LENGTH) || 'unknown';
}

function safeUserName(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}

export type { Provenance };
