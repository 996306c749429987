// The pun generator: thinks for a while (2 s by default), then comes up with the first pun this Dad has not
// told yet. A Dad that has told them all fails to think of one, which the Dad reports as losing his train of
// thought.

export const PUNS: readonly string[] = [
  "I'd tell you a UDP joke, but you might not get it.",
  "I'd tell you a TCP joke, but I'd have to keep repeating it until you got it.",
  'There are 10 kinds of people: those who understand binary and those who do not.',
  'I would tell you a joke about a flaky test, but it only works sometimes.',
  'Why do programmers prefer dark mode? Because light attracts bugs.',
  'A SQL query walks into a bar, goes up to two tables and asks: may I join you?',
  'I told my cluster a joke about split brain. Half of it laughed.',
  "Cache invalidation jokes are hard. I'd tell you one, but you'd still remember the old one.",
];

export interface ChatMessage {
  readonly from: string;
  readonly text: string;
}

export class PunGenerator {
  constructor(
    private readonly thinkMs = 2_000,
    private readonly puns: readonly string[] = PUNS,
  ) {}

  /** After `thinkMs`, a pun about `batch` that is not in `told`; rejects when every pun was told. */
  generate(batch: readonly ChatMessage[], told: ReadonlySet<string>): Promise<string> {
    return new Promise((resolve, reject) => {
      setTimeout(() => {
        const pun = this.puns.find((candidate) => !told.has(candidate));
        if (pun === undefined) reject(new Error(`out of puns after ${batch.length} messages`));
        else resolve(pun);
      }, this.thinkMs);
    });
  }
}
