// The ```ts blocks of a Markdown file, in order: what packed.test.ts type-checks as a user would paste them.
export function typescriptBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const fence = /^```ts[ \t]*\n([\s\S]*?)^```[ \t]*$/gm;
  for (const match of markdown.matchAll(fence)) blocks.push(match[1] ?? '');
  return blocks;
}
