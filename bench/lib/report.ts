// Writes a run's figures: the JSON file, the SVG chart and (full runs only) the figures section of
// bench/README.md between its markers, so the README always shows the latest full run and its command.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScenarioResult } from './scenario.js';
import { renderChart } from './svg-chart.js';
import { renderMarkdown } from './table.js';

const START = '<!-- bench:figures:start -->';
const END = '<!-- bench:figures:end -->';

export interface RunInfo {
  readonly command: string;
  readonly mode: 'quick' | 'full';
  readonly startedAt: string;
  readonly seconds: number;
  readonly machine: string;
  readonly node: string;
  readonly seed: number;
  readonly delayMs: number;
}

export function writeResults(
  benchDir: string,
  info: RunInfo,
  results: readonly ScenarioResult[],
  updateReadme: boolean,
): string[] {
  const dir = join(benchDir, 'results');
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const json = join(dir, `${info.mode}.json`);
  writeFileSync(
    json,
    JSON.stringify(
      {
        run: info,
        scenarios: results.map(({ id, title, data, headlines, seconds }) => ({ id, title, seconds, headlines, data })),
      },
      null,
      1,
    ) + '\n',
  );
  written.push(json);
  const svg = join(dir, `${info.mode}.svg`);
  writeFileSync(
    svg,
    renderChart(
      `actor-ts placement store vs baselines (${info.mode} run)`,
      `${info.startedAt.slice(0, 10)}, ${info.machine}, Node ${info.node}; S1-S3 and S8 simulated time, S4-S7 wall-clock`,
      results.flatMap((r) => r.panels),
    ),
  );
  written.push(svg);
  const readme = join(benchDir, 'README.md');
  if (updateReadme && existsSync(readme)) {
    const text = readFileSync(readme, 'utf8');
    const start = text.indexOf(START);
    const end = text.indexOf(END);
    if (start >= 0 && end > start) {
      writeFileSync(
        readme,
        text.slice(0, start + START.length) + '\n' + figuresMarkdown(info, results) + '\n' + text.slice(end),
      );
      written.push(readme);
    }
  }
  return written;
}

function figuresMarkdown(info: RunInfo, results: readonly ScenarioResult[]): string {
  const lines = [
    `Produced by \`${info.command}\` on ${info.startedAt} (${info.machine}, Node ${info.node}, seed ${info.seed}, ` +
      `${info.delayMs} ms one-way delay), in ${Math.round(info.seconds)} s. Raw figures: [results/${info.mode}.json](results/${info.mode}.json), ` +
      `chart: [results/${info.mode}.svg](results/${info.mode}.svg).`,
    '',
    `![summary chart](results/${info.mode}.svg)`,
    '',
    '### Headlines',
    '',
    ...results.flatMap((r) => r.headlines.map((h) => `- ${h}`)),
    '',
  ];
  for (const result of results) {
    lines.push(
      `### ${result.id.toUpperCase()}: ${result.title}${result.seconds !== undefined ? ` (${Math.round(result.seconds)} s)` : ''}`,
      '',
    );
    for (const table of result.tables) lines.push(renderMarkdown(table), '');
  }
  return lines.join('\n');
}
