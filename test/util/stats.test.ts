import { median } from '../../src/util/stats';

describe('median', () => {
  it('is the middle value, the mean of the two middle ones for an even count, ignoring non-finite values', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5, NaN, 1, Infinity])).toBe(3);
    expect(median([])).toBeNaN();
  });
});
