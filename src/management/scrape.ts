// How a metric whose value lives in the node (not in the events the metrics see) is kept current: read at each
// scrape. One piece for the node metrics and the safety metrics, gauges and totals alike.

/** What `collect` needs of a prom-client Gauge or Counter. */
interface ScrapedSeries {
  reset(): void;
  inc(value: number): void;
}

/**
 * A prom-client `collect` that sets an unlabelled series to what `read` answers at each scrape: a gauge's
 * value, or a total the source keeps (it only grows while the process lives).
 */
export function readAtScrape(read: () => number): (this: ScrapedSeries) => void {
  return function (this: ScrapedSeries): void {
    this.reset();
    this.inc(read());
  };
}
