// The shape every scenario returns: tables for the console and the README, raw figures for the JSON file,
// headline sentences, and the panels it contributes to the summary chart.
import type { Table } from './table.js';

export interface BenchOptions {
  readonly quick: boolean;
  readonly seed: number;
  /** One-way delay of the in-memory network in ms. */
  readonly delayMs: number;
  /** S8's cluster sizes (`--nodes 50,200`); default by mode. */
  readonly nodes?: readonly number[];
  /** S8: run every size to the end, without the work budget (`--no-budget`). */
  readonly noBudget?: boolean;
  /** S11 and S12: kill -9 runs in all, alternating member and coordinator (`--kill-runs 40`); default by mode. */
  readonly killRuns?: number;
}

export interface ChartSeries {
  readonly label: string;
  readonly values: readonly number[];
}

export interface ChartPanel {
  readonly title: string;
  readonly unit: string;
  readonly log: boolean;
  readonly groups: readonly string[];
  readonly series: readonly ChartSeries[];
}

export interface ScenarioResult {
  readonly id: string;
  readonly title: string;
  readonly tables: readonly Table[];
  readonly data: unknown;
  readonly headlines: readonly string[];
  readonly panels: readonly ChartPanel[];
  readonly seconds?: number;
}

export type Scenario = (options: BenchOptions) => Promise<ScenarioResult>;
