/**
 * The indices of `items` grouped by a key, each group in the items' order and the groups in the
 * order their keys first appear.
 */
export function indicesByKey<T>(items: readonly T[], key: (item: T) => string): number[][] {
  const groups = new Map<string, number[]>();
  items.forEach((item, i) => {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(i);
    else groups.set(k, [i]);
  });
  return [...groups.values()];
}
