// The Dad: one entity per chat, Pekko's three-state machine from the seed article. Idle until a message comes;
// collecting while the chat talks (every message restarts a 2.5 s quiet period); thinking while the pun
// generator works (2 s, through pipeToSelf, so the mailbox keeps taking messages); what arrives while
// thinking becomes the next batch.
import type { EntityBehavior, StandardSchemaV1 } from '@actor-ts/placement';
import { PunGenerator, type ChatMessage } from './puns.js';

export const DAD_TYPE = 'Dad';

/** What the webhook and the status route send a Dad (plain data: it may cross nodes). */
export type DadCommand =
  { readonly type: 'NewMessage'; readonly from: string; readonly text: string } | { readonly type: 'Status' };

/** Text bounds of a chat message (the webhook's body schema says the same). */
const MAX_FROM = 200;
const MAX_TEXT = 4_000;

/**
 * DadCommand as a Standard Schema, written by hand (zod or valibot would do the same in a line): the host checks
 * every message a Dad receives from outside against it, so `receive` never sees anything else.
 */
export const dadCommandSchema: StandardSchemaV1<DadCommand> = {
  '~standard': {
    version: 1,
    vendor: 'dadbot',
    validate: (value) => {
      const v = value as Partial<Record<string, unknown>> | null;
      if (typeof v === 'object' && v !== null && v['type'] === 'Status') return { value: { type: 'Status' } };
      const { from, text } = v ?? {};
      const fits = (s: unknown, max: number): s is string => typeof s === 'string' && s.length > 0 && s.length <= max;
      if (v?.['type'] === 'NewMessage' && fits(from, MAX_FROM) && fits(text, MAX_TEXT))
        return { value: { type: 'NewMessage', from, text } };
      return { issues: [{ message: 'expected { type: "NewMessage", from, text } or { type: "Status" }' }] };
    },
  },
};

export type DadState = 'idle' | 'collecting' | 'thinking';

/** A Dad's answer to `Status`: where it runs, what it is doing and what it told this chat. */
export interface DadStatus {
  readonly chatId: string;
  readonly node: string;
  readonly shardId: number;
  readonly state: DadState;
  readonly told: readonly string[];
}

/** What a Dad does that an application may want to show: it started on a node, told a joke, or gave up. */
export type DadEvent =
  | { readonly kind: 'entered'; readonly chatId: string; readonly node: string; readonly shardId: number }
  | {
      readonly kind: 'joke';
      readonly chatId: string;
      readonly node: string;
      readonly shardId: number;
      readonly joke: string;
    }
  | {
      readonly kind: 'lost';
      readonly chatId: string;
      readonly node: string;
      readonly shardId: number;
      readonly reason: string;
    };

export interface DadOptions {
  /** Quiet needed before Dad thinks; default 2,500 ms. */
  readonly quietMs?: number;
  readonly puns?: PunGenerator;
  /** Where Dad's replies (and his arrival) go; the chat of the article. */
  readonly onEvent?: (event: DadEvent) => void;
}

// Dad's private messages are objects of this module (the timer's one object, a class for piped outcomes):
// nothing that arrives over the wire, which decodes to plain data, can pass for them.
const QUIET = Object.freeze({ type: 'Quiet' });
class JokeOutcome {
  constructor(
    readonly joke: string | undefined,
    readonly reason: string,
  ) {}
}

export function dadBehavior(options: DadOptions = {}): EntityBehavior {
  const quietMs = options.quietMs ?? 2_500;
  const puns = options.puns ?? new PunGenerator();
  const emit = options.onEvent ?? (() => undefined);
  return (ctx) => {
    const where = { chatId: ctx.entityId, node: ctx.node.toString(), shardId: ctx.shardId };
    let state: DadState = 'idle';
    // A graceful move hands over what this Dad told and what the chat said since (snapshot below), so the new
    // host's Dad never tells a joke again; after a crash of the host he starts with nothing.
    const restored = restoredMemory(ctx.restored);
    const told = new Set<string>(restored.told);
    let batch: ChatMessage[] = [...restored.batch];
    // What the pun generator is working on: if the shard moves mid-thought, it goes back into the batch.
    let thinkingAbout: ChatMessage[] = [];
    emit({ kind: 'entered', ...where });

    // Same key: every message restarts the quiet period, and a Quiet already queued is never delivered.
    const waitForQuiet = (): void => ctx.timers.startSingleTimer('quiet', QUIET, quietMs);
    const next = (): void => {
      if (batch.length === 0) {
        state = 'idle';
        return;
      }
      state = 'collecting';
      waitForQuiet();
    };
    // Messages handed over unanswered get their quiet period on this host.
    if (batch.length > 0) next();

    return {
      receive(message: unknown): DadStatus | undefined {
        if (message === QUIET && state === 'collecting') {
          thinkingAbout = batch;
          batch = [];
          state = 'thinking';
          ctx.pipeToSelf(puns.generate(thinkingAbout, told), (outcome) =>
            outcome.ok
              ? new JokeOutcome(outcome.value, '')
              : new JokeOutcome(undefined, String((outcome.error as Error)?.message ?? outcome.error)),
          );
          return undefined;
        }
        if (message instanceof JokeOutcome && state === 'thinking') {
          thinkingAbout = [];
          if (message.joke !== undefined) {
            told.add(message.joke);
            emit({ kind: 'joke', ...where, joke: message.joke });
          } else {
            emit({ kind: 'lost', ...where, reason: message.reason });
          }
          next();
          return undefined;
        }
        const command = message as Partial<DadCommand> | null;
        if (command?.type === 'NewMessage' && typeof command.from === 'string' && typeof command.text === 'string') {
          batch.push({ from: command.from, text: command.text });
          // While thinking, messages wait for the next batch; otherwise they (re)start the quiet period.
          if (state !== 'thinking') {
            state = 'collecting';
            waitForQuiet();
          }
          return undefined;
        }
        if (command?.type === 'Status') return { ...where, state, told: [...told] };
        throw new Error('Dad does not understand that message');
      },
      snapshot: (): DadMemory => ({ told: [...told], batch: [...thinkingAbout, ...batch] }),
    };
  };
}

/** What a Dad hands to his successor on a graceful move: the jokes told, and the messages not yet answered. */
interface DadMemory {
  readonly told: readonly string[];
  readonly batch: readonly ChatMessage[];
}

/** `ctx.restored` read as a DadMemory; anything else (a fresh start, another version's shape) is no memory. */
function restoredMemory(value: unknown): DadMemory {
  const memory = value as Partial<DadMemory> | undefined;
  const told = Array.isArray(memory?.told)
    ? memory.told.filter((joke): joke is string => typeof joke === 'string')
    : [];
  const batch = Array.isArray(memory?.batch)
    ? memory.batch.filter(
        (m): m is ChatMessage =>
          typeof m === 'object' && m !== null && typeof m.from === 'string' && typeof m.text === 'string',
      )
    : [];
  return { told, batch };
}
