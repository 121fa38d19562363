/**
 * Latency recording with HdrHistogram (the pure-JS build: no WebAssembly to initialise, and
 * fast enough at the rates one load process can offer). Values are kept in microseconds
 * with 3 significant digits, so a 4 ms p99 and a 4 s p99 are both exact to 0.1 %.
 */
import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  count: number;
  /** Milliseconds, rounded to the microsecond. */
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

const ms = (micros: number) => Math.round(micros) / 1000;

export class LatencyHistogram {
  private readonly h = hdr.build({ useWebAssembly: false, numberOfSignificantValueDigits: 3, autoResize: true, lowestDiscernibleValue: 1 });

  /** Records one latency given in milliseconds (fractions kept down to the microsecond). */
  record(milliseconds: number): void {
    this.h.recordValue(Math.max(1, Math.round(milliseconds * 1000)));
  }

  get count(): number {
    return this.h.totalCount;
  }

  /**
   * Latency at `percentile` (0–100), in milliseconds. HdrHistogram answers with the top of the
   * value's bucket, which can exceed the largest value recorded; the maximum caps it.
   */
  at(percentile: number): number {
    return ms(Math.min(this.h.getValueAtPercentile(percentile), this.h.maxValue));
  }

  summary(): LatencySummary {
    if (this.h.totalCount === 0) return { count: 0, mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 };
    return {
      count: this.h.totalCount,
      mean: ms(this.h.mean),
      p50: this.at(50),
      p90: this.at(90),
      p99: this.at(99),
      p999: this.at(99.9),
      max: ms(this.h.maxValue),
    };
  }

  /** The whole distribution, compressed (HdrHistogram's base64 format), for later comparison of runs. */
  encoded(): string {
    return hdr.encodeIntoCompressedBase64(this.h);
  }
}
