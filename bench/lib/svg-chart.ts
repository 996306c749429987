// A hand-written SVG of grouped bar charts, one panel per figure, two panels per row; log or linear axes.
// No dependency: the chart is plain text that diffs well in a commit.
import type { ChartPanel } from './scenario.js';
import { fmt } from './stats.js';

const PANEL_W = 560;
const PANEL_H = 330;
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd'];
const PLOT = { left: 70, right: 15, top: 42, bottom: 95 };

export function renderChart(title: string, subtitle: string, panels: readonly ChartPanel[]): string {
  const columns = 2;
  const rows = Math.ceil(panels.length / columns);
  const width = columns * PANEL_W;
  const height = 60 + rows * PANEL_H;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">${escape(title)}</text>`,
    `<text x="${width / 2}" y="44" text-anchor="middle" font-size="11" fill="#555">${escape(subtitle)}</text>`,
  ];
  panels.forEach((panel, i) => {
    const x = (i % columns) * PANEL_W;
    const y = 60 + Math.floor(i / columns) * PANEL_H;
    parts.push(`<g transform="translate(${x},${y})">${renderPanel(panel)}</g>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

function renderPanel(panel: ChartPanel): string {
  const plotW = PANEL_W - PLOT.left - PLOT.right;
  const plotH = PANEL_H - PLOT.top - PLOT.bottom;
  const values = panel.series.flatMap((s) => s.values).filter((v) => Number.isFinite(v) && (!panel.log || v > 0));
  const out: string[] = [
    `<text x="${PANEL_W / 2}" y="20" text-anchor="middle" font-size="13" font-weight="bold">${escape(panel.title)}</text>`,
  ];
  if (values.length === 0) return out.join('');
  const scale = panel.log ? logScale(values, plotH) : linearScale(values, plotH);
  out.push(`<g transform="translate(${PLOT.left},${PLOT.top})">`);
  for (const tick of scale.ticks) {
    const ty = plotH - scale.y(tick);
    out.push(`<line x1="0" x2="${plotW}" y1="${ty}" y2="${ty}" stroke="#e3e3e3"/>`);
    out.push(`<text x="-6" y="${ty + 4}" text-anchor="end" fill="#444">${escape(shortNumber(tick))}</text>`);
  }
  out.push(
    `<line x1="0" x2="0" y1="0" y2="${plotH}" stroke="#888"/><line x1="0" x2="${plotW}" y1="${plotH}" y2="${plotH}" stroke="#888"/>`,
  );
  out.push(
    `<text transform="translate(-52,${plotH / 2}) rotate(-90)" text-anchor="middle" fill="#444">${escape(panel.unit)}${panel.log ? ' (log)' : ''}</text>`,
  );
  const groupW = plotW / panel.groups.length;
  const barW = Math.min(40, (groupW * 0.8) / panel.series.length);
  panel.groups.forEach((group, g) => {
    const gx = g * groupW + (groupW - barW * panel.series.length) / 2;
    panel.series.forEach((series, s) => {
      const value = series.values[g] ?? Number.NaN;
      const bx = gx + s * barW;
      if (!Number.isFinite(value) || (panel.log && value <= 0)) {
        out.push(
          `<text x="${bx + barW / 2}" y="${plotH - 4}" text-anchor="middle" font-size="9" fill="#999">${Number.isFinite(value) ? '0' : 'n/a'}</text>`,
        );
        return;
      }
      const h = Math.max(1, scale.y(value));
      out.push(
        `<rect x="${bx + 1}" y="${plotH - h}" width="${barW - 2}" height="${h}" fill="${COLORS[s % COLORS.length]}"><title>${escape(`${series.label}, ${group}: ${fmt(value)} ${panel.unit}`)}</title></rect>`,
      );
      out.push(
        `<text x="${bx + barW / 2}" y="${plotH - h - 3}" text-anchor="middle" font-size="9" fill="#222">${escape(shortNumber(value))}</text>`,
      );
    });
    out.push(
      `<text x="${g * groupW + groupW / 2}" y="${plotH + 15}" text-anchor="middle" fill="#222">${escape(group)}</text>`,
    );
  });
  panel.series.forEach((series, s) => {
    const ly = plotH + 32 + s * 14;
    out.push(`<rect x="0" y="${ly - 9}" width="10" height="10" fill="${COLORS[s % COLORS.length]}"/>`);
    out.push(`<text x="15" y="${ly}" fill="#222">${escape(series.label)}</text>`);
  });
  out.push('</g>');
  return out.join('');
}

interface Scale {
  readonly y: (value: number) => number;
  readonly ticks: readonly number[];
}

function logScale(values: readonly number[], height: number): Scale {
  const lo = Math.floor(Math.log10(Math.min(...values)));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...values)) + 0.15));
  // Bars start one decade below the smallest value so the smallest bar is still visible.
  const base = lo - 1;
  const ticks: number[] = [];
  for (let e = base; e <= hi; e++) ticks.push(10 ** e);
  return { y: (v) => ((Math.log10(v) - base) / (hi - base)) * height, ticks };
}

function linearScale(values: readonly number[], height: number): Scale {
  const max = Math.max(...values, 0) * 1.12 || 1;
  const step = niceStep(max / 5);
  const ticks: number[] = [];
  for (let t = 0; t <= max + step / 2; t += step) ticks.push(t);
  const top = ticks[ticks.length - 1] as number;
  return { y: (v) => (v / top) * height, ticks };
}

function niceStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = raw / power;
  return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
}

function shortNumber(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${+(value / 1e9).toPrecision(3)}G`;
  if (abs >= 1e6) return `${+(value / 1e6).toPrecision(3)}M`;
  if (abs >= 1e4) return `${+(value / 1e3).toPrecision(3)}k`;
  if (abs >= 1) return `${+value.toPrecision(3)}`;
  if (abs === 0) return '0';
  return `${+value.toPrecision(2)}`;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
