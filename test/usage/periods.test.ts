import { describe, expect, it } from "vitest";
import { daysBefore, monthsBefore, utcDay, utcMonth } from "../../src/core/usage/periods.js";

describe("usage periods", () => {
  it("name the UTC day and month of any instant, asked in any order (the last day is kept)", () => {
    const iso = (at: number) => new Date(at).toISOString();
    const start = Date.UTC(2027, 11, 30, 23, 59, 59, 999);
    for (let i = 0; i < 2_000; i++) {
      // Back and forth across midnights, month and year ends.
      const at = start + (i % 2 ? 1 : -1) * i * 3_600_000 + (i % 3) * 1;
      expect(utcDay(at)).toBe(iso(at).slice(0, 10));
      expect(utcMonth(at)).toBe(iso(at).slice(0, 7));
    }
    expect(utcDay(Date.UTC(2028, 1, 29, 0, 0, 0, 0) - 1)).toBe("2028-02-28");
    expect(daysBefore(Date.UTC(2028, 2, 1), 1)).toBe("2028-02-29");
    expect(monthsBefore(Date.UTC(2028, 0, 31), 2)).toBe("2027-11");
    expect(() => utcDay(Number.NaN)).toThrow(RangeError);
  });
});
