// The timeline lines DadBot prints, as in the seed article: the time, then what happened, with the node that
// served it and the shard the chat lives in. Node names are what the caller calls its nodes (node-0, ...).
import type { DadEvent } from './dad.js';

export function clock(date = new Date()): string {
  return date.toISOString().slice(11, 23);
}

export class Timeline {
  /** Jokes told per chat across every Dad incarnation: a new Dad does not remember, this does. */
  private readonly told = new Map<string, Set<string>>();

  constructor(
    private readonly print: (line: string) => void,
    private readonly nameOf: (address: string) => string = (address) => address,
  ) {}

  line(text: string): void {
    this.print(`${clock()}  ${text}`);
  }

  event(event: DadEvent): void {
    const node = this.nameOf(event.node);
    switch (event.kind) {
      case 'entered':
        this.line(`Dad for ${event.chatId} has entered the chat on ${node} (shard ${event.shardId})`);
        return;
      case 'joke': {
        this.line(`${event.chatId} · DadBot: ${event.joke}  (${node}, shard ${event.shardId})`);
        const told = this.told.get(event.chatId) ?? new Set<string>();
        if (told.has(event.joke)) this.print(`Repeated joke in ${event.chatId}!`);
        told.add(event.joke);
        this.told.set(event.chatId, told);
        return;
      }
      case 'lost':
        this.line(`Dad for ${event.chatId} lost his train of thought on ${node}: ${event.reason}`);
        return;
    }
  }
}
