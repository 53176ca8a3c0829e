/** The one source of the current time, so tests of 60 s codes or 30-day windows run instantly. */
export interface Clock {
  now(): Date;
  nowMs(): number;
  /** Unix seconds. */
  nowSec(): number;
}

export const systemClock: Clock = {
  now: () => new Date(),
  nowMs: () => Date.now(),
  nowSec: () => Math.floor(Date.now() / 1000),
};

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  private ms: number;
  constructor(start: Date | number = Date.now()) {
    this.ms = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  nowMs(): number {
    return this.ms;
  }
  nowSec(): number {
    return Math.floor(this.ms / 1000);
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
  set(date: Date | number): void {
    this.ms = typeof date === 'number' ? date : date.getTime();
  }
}
