// `placements ls | set | rm`: explicit shard placements of an entity type, with their rule (mode, expiry,
// reason, author). Arguments are checked here with the same validators the API applies, so a typo is a
// usage error (exit code 2) and nothing is sent.
import { Command, InvalidArgumentError } from 'commander';
import { ActorTsError } from '../errors.js';
import type { PinRecord, PinRequestBody } from '../management/api-shapes.js';
import { validateBy, validateExpiresAt, validateReason } from '../sharding/placements/placement-options.js';
import { parsePlacementTarget } from '../sharding/placements/placement-target.js';
import { parseDuration } from './duration.js';
import { table } from './format.js';
import { printDryRun } from './insight-commands.js';
import { addressArg, connect, hlcText, rebalanceAndWait, shardIdArg, usage, type CliIo } from './operator-support.js';
import { defaultBy, provenanceOf, withProvenance, type ProvenanceOptions } from './provenance.js';

interface SetOptions {
  move: boolean;
  dryRun: boolean;
  require?: boolean;
  prefer?: boolean;
  ttl?: number;
  expiresAt?: string;
  reason?: string;
  by?: string;
  allowUnknown: boolean;
}

export function addPlacementsCommands(program: Command, io: CliIo): void {
  const placements = program.command('placements').description('explicit shard placements of an entity type');
  placements
    .command('ls')
    .description('list explicit placements with their mode, expiry and reason')
    .option('--include-expired', 'also list pins whose expiry has passed (marked expired)', false)
    .action(async (options: { includeExpired: boolean }, command: Command) => {
      const { client, type } = connect(command);
      const { placements: rows } = await client.placements(type, { includeExpired: options.includeExpired });
      if (rows.length === 0) return io.out(`no explicit placements for ${type}`);
      io.out(
        table(
          ['shard', 'target', 'mode', 'expires', 'reason', 'by', 'writer', 'hlc'],
          rows.map((p) => [
            String(p.shardId),
            p.target,
            p.mode,
            expiryText(p),
            p.reason ?? '-',
            p.by ?? '-',
            p.writer,
            hlcText(p.hlc),
          ]),
        ),
      );
    });
  placements
    .command('set <shardId> <target>')
    .description('pin a shard to a node (system@host:port) or to nodes with attributes (KEY=VALUE[,KEY=VALUE...])')
    .option('--require', 'the shard may live only on a matching node: with none, it has no home (asks fail)')
    .option('--prefer', 'a matching node when there is one, else the fallback strategy decides (the default)')
    .option('--ttl <duration>', 'the pin expires after this long: 90s, 10m, 2h, 1d or plain milliseconds', durationArg)
    .option('--expires-at <iso>', 'the pin expires at this ISO-8601 date-time with a zone (e.g. 2030-01-31T12:00:00Z)')
    .option('--reason <text>', 'why the pin exists (at most 500 characters), logged and listed with it')
    .option('--by <who>', 'who asks (default $USER@hostname)')
    .option('--move', 'also hand the shard off now so it moves to the target at once', false)
    .option('--dry-run', 'print the moves this pin would start; write nothing', false)
    .option(
      '--allow-unknown',
      'write the pin even when no current member matches the target (a node that has not joined yet)',
      false,
    )
    .action(async (shardId: string, target: string, options: SetOptions, command: Command) => {
      const { client, type } = connect(command);
      const entry = usage(command, () => placementEntry(shardId, target, options));
      const write = { allowUnknownTarget: options.allowUnknown };
      if (options.dryRun) return printDryRun(io, await client.dryRunPlacements(type, [entry], write));
      const result = await client.setPlacements(type, [entry], write);
      for (const written of result.placements) io.out(writtenText(written));
      for (const warning of result.warnings) io.err(`warning: ${warning.message}`);
      if (options.move)
        await rebalanceAndWait(client, type, [entry.shardId], io, {
          by: entry.by ?? defaultBy(),
          ...(entry.reason === undefined ? {} : { reason: entry.reason }),
        });
    });
  withProvenance(placements.command('rm <shardId>'))
    .description('remove a pin; the shard returns to the fallback strategy at the next rebalance')
    .action(async (shardId: string, options: ProvenanceOptions, command: Command) => {
      const { client, type } = connect(command);
      const shard = usage(command, () => shardIdArg(shardId));
      await client.removePlacement(
        type,
        shard,
        usage(command, () => provenanceOf(options)),
      );
      io.out(`shard ${shardId}: pin removed`);
    });
}

/** The entry to send, every part checked as the API would; InvalidArgumentError names the first problem. */
function placementEntry(shardId: string, target: string, options: SetOptions): PinRequestBody {
  const shard = shardIdArg(shardId);
  if (options.require && options.prefer) throw new InvalidArgumentError('give --require or --prefer, not both');
  if (options.ttl !== undefined && options.expiresAt !== undefined)
    throw new InvalidArgumentError('give --ttl or --expires-at, not both');
  if (options.dryRun && options.move) throw new InvalidArgumentError('give --dry-run or --move, not both');
  return ruleChecked(() => ({
    shardId: shard,
    target: targetArg(target),
    ...(options.require ? { mode: 'require' as const } : {}),
    ...(options.ttl !== undefined ? { ttlMs: options.ttl } : {}),
    // Checked against this machine's clock; the node checks again against its own.
    ...(options.expiresAt !== undefined
      ? { expiresAt: (validateExpiresAt(options.expiresAt, Date.now()), options.expiresAt) }
      : {}),
    ...(options.reason !== undefined ? { reason: validateReason(options.reason) } : {}),
    by: options.by !== undefined ? validateBy(options.by) : defaultBy(),
  }));
}

function targetArg(value: string): string {
  // An address keeps its established message; anything else is judged as a target.
  if (value.includes('@')) return addressArg(value);
  return parsePlacementTarget(value).canonical;
}

function ruleChecked<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof ActorTsError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

function durationArg(value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function expiryText(p: PinRecord): string {
  if (p.expiresAt === null) return 'never';
  return p.expired === true ? `${p.expiresAt} (expired)` : p.expiresAt;
}

function writtenText(p: PinRecord): string {
  const rule = [
    ...(p.mode === 'require' ? ['require'] : []),
    ...(p.expiresAt !== null ? [`expires ${p.expiresAt}`] : []),
    ...(p.reason !== null ? [`reason ${JSON.stringify(p.reason)}`] : []),
  ];
  return `shard ${p.shardId} -> ${p.target} (${[...rule, `hlc ${hlcText(p.hlc)}`].join(', ')})`;
}
